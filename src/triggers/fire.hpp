// Firing (spec §6.1): the part of a trigger that runs inside the write that fires it. Called by
// the write pipeline (write/record_writer) for every create, update and delete, whoever writes, so
// every entry point fires. For each active trigger of the class whose event and conditions hold,
// it writes in the write's own unit the "fired" `_syslogTriggers` row and the activation
// (triggers/activation.hpp), and hands the activation to the application's runner once the unit
// is durable. A class without triggers costs one emptiness check.
#pragma once

#include <boost/json.hpp>
#include <string_view>

#include "app/write_unit.hpp"
#include "auth/context.hpp"
#include "schema/class_schema.hpp"
#include "storage/row.hpp"
#include "triggers/definition.hpp"
#include "util/result.hpp"

namespace crmd::triggers {

struct Write {
  WriteEvent event = WriteEvent::kCreate;
  const schema::ClassSchema* cls = nullptr;  // the class as the write left it
  std::string_view object_id;
  const boost::json::object* body = nullptr;  // what the write sent (create, update)
  const storage::Row* before = nullptr;       // delete: the row as it was, every field read
};

// Call after the row is written (create, update) or before it is deleted (delete), in `unit`.
// `ctx` is the writer's: an action's writes are a level deeper than the action's own.
Status Fire(app::WriteUnit& unit, const auth::Context& ctx, const Write& write);

}  // namespace crmd::triggers
