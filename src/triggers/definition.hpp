// Trigger definitions (spec §2.5 `triggers`, §6.1; the format is crmd's, docs/TRIGGERS.md):
//
//   Definition := {"_id": Id, "name"?: String, "active"?: Boolean, "event": Event,
//                  "conditions"?: [Condition], "actions": [Action]}
//   Event      := "create" | "update" | "delete" | "save"            save: create and update
//   Condition  := {"where": <the record API's where>} | {"changed": [FieldName+]}
//   Action     := {"_id": Id, "actionType": Type, "actionData": {Type: Data}}
//   Type/Data  := create-record {table, data} | update-record {data} | send-email {to, subject, html}
//               | notification {user, content, icon?} | webhook {url, headers?}
//               | server-side-code {functionName, useQueue?}
//   Id         := 10 of [A-Za-z0-9], assigned by the server when missing
//
// A class's list is checked whole when it is set (CheckDefinitions) and stored as JSON with its
// ids filled; what runs is the typed form (ParseDefinition), built once per schema snapshot
// (triggers/plan.hpp).
#pragma once

#include <boost/json.hpp>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "schema/class_schema.hpp"
#include "util/result.hpp"

namespace crmd::triggers {

// Definitions one class may hold, and actions one definition may hold: each definition is looked
// at on every write of its class, and each action is a unit of work after it.
inline constexpr std::size_t kMaxTriggersPerClass = 50;
inline constexpr std::size_t kMaxActionsPerTrigger = 20;
inline constexpr std::size_t kMaxNameLength = 200;

enum class WriteEvent { kCreate, kUpdate, kDelete };
std::string_view EventName(WriteEvent event);

enum class ActionType { kCreateRecord, kUpdateRecord, kSendEmail, kNotification, kWebhook, kServerSideCode };
std::string_view ActionTypeName(ActionType type);
std::optional<ActionType> ParseActionType(std::string_view name);

struct Action {
  std::string id;
  ActionType type = ActionType::kCreateRecord;
  boost::json::object definition;  // the whole action as stored: what an activation carries
};

struct Definition {
  std::string id;
  bool active = true;
  bool on_create = false, on_update = false, on_delete = false;
  std::vector<boost::json::object> wheres;          // all must match the record
  std::vector<std::vector<std::string>> changed;    // each: the write sent one of these fields
  std::vector<Action> actions;

  bool FiresOn(WriteEvent event) const;
};

// Whether a deployed function of the application has this name.
using FunctionExists = std::function<bool(std::string_view name)>;

// Checks a schema body's `triggers` value for `cls` (as it will be, its other changes applied)
// against `snapshot` (for tables and sub-queries), and returns the list to store: the same
// definitions with every missing `_id` drawn. 400 107 naming the definition and what is wrong.
Result<boost::json::array> CheckDefinitions(const boost::json::value& triggers, const schema::ClassSchema& cls,
                                            const schema::Snapshot& snapshot, const FunctionExists& function_exists);

// A stored definition (checked when it was set) in typed form. Errors only for a definition that
// no longer reads (a store edited by hand).
Result<Definition> ParseDefinition(const boost::json::object& stored);

}  // namespace crmd::triggers
