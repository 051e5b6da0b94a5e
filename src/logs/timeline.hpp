// The change history (spec §2.5 `timeline`, §2.6 `_Timeline`, §3.4, §6.2): one `_Timeline` row
// per create, update and delete of a class whose schema carries `timeline`, written in the write
// unit of the change it records, so that both are durable or neither (row layout:
// schema/log_classes.hpp).
//
// `Last` is true on a record's newest row and on no other: the write that adds a row clears the
// flag of the row before it, inside the same unit, and writes to one application are serialised,
// so concurrent writes to one record cannot leave two (the old system's several-`Last` rows are
// an accident it had, not a contract).
#pragma once

#include <boost/json.hpp>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "app/write_unit.hpp"
#include "auth/context.hpp"
#include "schema/class_schema.hpp"
#include "storage/row.hpp"
#include "util/result.hpp"

namespace crmd::logs {

enum class TimelineEvent { kCreate, kUpdate, kDelete };

struct Change {
  TimelineEvent event = TimelineEvent::kCreate;
  const schema::ClassSchema* cls = nullptr;  // the class written; nothing is recorded without timeline
  std::string object_id;
  // What the request sent (create, update): `data`, in wire form, the password left out.
  const boost::json::object* body = nullptr;
  // The record's stored value of a field after the write (create, update): the index pointers.
  std::function<storage::Cell(std::string_view field)> value_of;
  std::optional<std::string> acl;  // the record's: who may read the record may read its history
  std::string at;                  // the write's time
  bool fresh_id = false;           // a create under an id the server drew: no history to take over
};

// Records `change` in `unit`, as `ctx` made it. A class without timeline records nothing. A
// `_Timeline` that does not exist yet, or lacks an index column the class names, is a schema
// change: the unit must be exclusive for it (Restarting() otherwise).
Status RecordChange(app::WriteUnit& unit, const auth::Context& ctx, const Change& change);

// A record's new ACL reaches its history (issue 31 #8): every `_Timeline` row of the record
// takes it, in the unit that changes the record, so a row is never readable by a session the
// record itself now hides (and reads stay one indexed query under the usual ACL filter). The
// Master identity still reads every row; no row is deleted. Nothing to do without `_Timeline`.
void FollowAcl(app::WriteUnit& unit, std::string_view class_name, std::string_view object_id,
               const std::optional<std::string>& acl);

// The value of `_Timeline.user` for a write by `identity`: the signed-in user's objectId, the
// literal `Master` for keys and crmd's own writes, null (nullopt) for anonymous ones.
std::optional<std::string> TimelineUser(const auth::Identity& identity);

// The `_Timeline` the unit's schema needs for `timeline` (a class's `timeline` value): the class
// as it is, or made or upgraded, with the index columns added. Errors when an index column exists
// with another type. nullopt: nothing to change.
Result<std::optional<schema::ClassSchema>> TimelineClassFor(const schema::Snapshot& snapshot,
                                                            const boost::json::object& timeline);

}  // namespace crmd::logs
