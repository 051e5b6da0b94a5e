#include "logs/trigger_log.hpp"

#include "schema/log_classes.hpp"
#include "storage/write_transaction.hpp"
#include "util/time.hpp"

namespace crmd::logs {

Status RecordTriggerRun(app::WriteUnit& unit, const TriggerRun& run) {
  const schema::ClassSchema* log = unit.schema()->Find(schema::kTriggerLogClass);
  if (!log) {
    if (!unit.MayChangeSchema()) return app::WriteUnit::Restarting();
    schema::ClassSchema made = schema::TriggerLogClass();
    unit.txn().SaveClass(nullptr, made);
    unit.ChangeSchema(unit.schema()->With(std::move(made)));
    log = unit.schema()->Find(schema::kTriggerLogClass);
  }
  storage::Row row;
  row.created_at = row.updated_at = timeutil::NowIso();
  std::vector<std::string> columns;
  // Only the fields the store's `_syslogTriggers` has: the product base's and crmd's have them all.
  auto add = [&](const char* column, const std::optional<std::string>& value) {
    if (!log->FindField(column)) return;
    if (!value) {
      row.nulls.emplace_back(column);  // spec §2.6: null, not absent
      return;
    }
    columns.emplace_back(column);
    row.cells.emplace_back(*value);
  };
  add("triggerId", run.trigger_id);
  add("actionId", run.action_id);
  add("event", run.event);
  add("objectIdValue", run.object_id);
  add("data", run.data);
  add("error", run.error);
  storage::InsertWithNewId(unit.txn(), *log, columns, row, [](storage::Row&) {});
  unit.Wrote(log->name);
  return {};
}

}  // namespace crmd::logs
