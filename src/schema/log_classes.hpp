// The log classes crmd writes itself (spec §2.6): `_Timeline`, the change history, and
// `_RequestLog`, one row per write request. Like every system class they are registered lazily
// (spec §2.3): `_Timeline` with the product base or when a class turns its timeline on,
// `_RequestLog` with the first request it logs.
//
// `_Timeline` rows: event (`create` | `update` | `delete`), objectClass, objectIdValue, data (the
// fields the write sent, as sent), user (the writer's objectId, or the literal `Master`), Referer,
// Last (true on a record's newest row only), createdBy/updatedBy (the literal `Master`: they
// describe who wrote the log row), and one Pointer column per name in the `timeline.index` of a
// class (`{"AccountId":"Accounts"}`).
#pragma once

#include <optional>
#include <string_view>

#include "schema/class_schema.hpp"

namespace crmd::schema {

inline constexpr std::string_view kTimelineClass = "_Timeline";
inline constexpr std::string_view kRequestLogClass = "_RequestLog";
// Automation runs (spec §2.6, docs/TRIGGERS.md): triggerId, actionId, event, objectIdValue, data,
// error, all strings; written by crmd only.
inline constexpr std::string_view kTriggerLogClass = "_syslogTriggers";
// The name `_Timeline.user`, createdBy and updatedBy give every write not made by a signed-in user
// (master key, API key, functions, triggers, MCP): spec §2.6's placeholder user.
inline constexpr std::string_view kMasterPlaceholder = "Master";

// Whether `class_name` is one of the logs above: rows written once and never updated by a client
// write (the history's `Last` flag is crmd's bookkeeping), so their tables need no updatedAt index.
bool IsAppendOnlyLog(std::string_view class_name);

ClassSchema TimelineClass();
ClassSchema RequestLogClass();
ClassSchema TriggerLogClass();

// `existing` (an older release's `_Timeline`, or the product base's) with the fields crmd writes
// typed as TimelineClass() types them (createdBy and updatedBy were Pointers to `_User`); fields
// of its own, index columns among them, kept. nullopt when nothing needs to change.
std::optional<ClassSchema> UpgradedTimelineClass(const ClassSchema& existing);

// Checks a `timeline` schema value (spec §2.5): `{displayFields: {field: true, ...}, index:
// {column: "<Class>", ...}}`, both optional, nothing else.
Status CheckTimelineConfig(const boost::json::object& timeline);

}  // namespace crmd::schema
