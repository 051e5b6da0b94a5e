#include "logs/timeline.hpp"

#include <fmt/format.h>

#include "schema/log_classes.hpp"
#include "storage/write_transaction.hpp"
#include "util/errors.hpp"
#include "util/json.hpp"

namespace crmd::logs {

namespace json = boost::json;

namespace {

std::string_view EventName(TimelineEvent event) {
  switch (event) {
    case TimelineEvent::kCreate: return "create";
    case TimelineEvent::kUpdate: return "update";
    case TimelineEvent::kDelete: return "delete";
  }
  return "update";
}

// `data`: the body as sent; a password never goes into a log. A trigger's write names its
// trigger (spec §2.6 `updatedByTrigger`).
std::string DataOf(const schema::ClassSchema& cls, const json::object& body, const std::string& trigger_id) {
  std::string out;
  out.reserve(1024);  // a form of twenty-odd fields, written without growing
  const bool password = cls.name == "_User" && body.contains("password");
  if (!password && trigger_id.empty()) {
    WriteJson(body, out);
    return out;
  }
  json::object kept;
  for (const auto& kv : body)
    if (!password || kv.key() != "password") kept.emplace(kv.key(), kv.value());
  if (!trigger_id.empty()) kept["updatedByTrigger"] = trigger_id;
  WriteJson(kept, out);
  return out;
}

// Whether `history` has a Pointer column for every name of the class's `timeline.index`.
bool HasIndexColumns(const schema::ClassSchema& history, const json::object& timeline) {
  const auto* index = timeline.if_contains("index");
  if (!index || !index->is_object()) return true;
  for (const auto& kv : index->get_object()) {
    const auto* def = history.FindField(kv.key());
    if (!def || def->type != schema::FieldType::kPointer || !kv.value().is_string() ||
        def->target_class != kv.value().get_string())
      return false;
  }
  return true;
}

ApiError IndexConflict(std::string_view column) {
  return ApiError{400, 255, fmt::format("timeline index {} conflicts with the field _Timeline.{}", column, column)};
}

}  // namespace

void FollowAcl(app::WriteUnit& unit, std::string_view class_name, std::string_view object_id,
               const std::optional<std::string>& acl) {
  const schema::ClassSchema* history = unit.schema()->Find(schema::kTimelineClass);
  if (!history) return;
  schema::Expr rows;
  rows.kind = schema::ExprKind::kAnd;
  rows.children.push_back(schema::FieldEquals("objectIdValue", std::string(object_id)));
  rows.children.push_back(schema::FieldEquals("objectClass", std::string(class_name)));
  unit.txn().SetAclWhere(*history, rows, acl);
}

std::optional<std::string> TimelineUser(const auth::Identity& identity) {
  switch (identity.principal) {
    case auth::Principal::kUser: return identity.user_id;
    case auth::Principal::kMaster:
    case auth::Principal::kApiKey:
    case auth::Principal::kSystem: return std::string(schema::kMasterPlaceholder);
    case auth::Principal::kAnonymous:
    case auth::Principal::kRejected: return std::nullopt;
  }
  return std::nullopt;
}

Result<std::optional<schema::ClassSchema>> TimelineClassFor(const schema::Snapshot& snapshot,
                                                            const json::object& timeline) {
  const schema::ClassSchema* existing = snapshot.Find(schema::kTimelineClass);
  std::optional<schema::ClassSchema> out =
      existing ? schema::UpgradedTimelineClass(*existing) : std::optional(schema::TimelineClass());
  const schema::ClassSchema& current = out ? *out : *existing;
  std::vector<std::pair<std::string, schema::FieldDef>> added;
  if (const auto* index = timeline.if_contains("index"); index && index->is_object()) {
    for (const auto& kv : index->get_object()) {
      if (!kv.value().is_string()) continue;  // CheckTimelineConfig refused it
      const schema::FieldDef wanted{schema::FieldType::kPointer, std::string(kv.value().get_string())};
      const auto* def = current.FindField(kv.key());
      if (!def) {
        added.emplace_back(std::string(kv.key()), wanted);
      } else if (def->type != wanted.type || def->target_class != wanted.target_class) {
        return IndexConflict(kv.key());
      }
    }
  }
  if (added.empty()) return out;
  if (!out) out = *existing;
  for (auto& f : added) {
    // A record's card lists the rows of one pointer in time order: the index serves it whole.
    out->indexes[f.first + "_1"] = json::object{{f.first, 1}};
    out->fields.push_back(std::move(f));
  }
  return out;
}

Status RecordChange(app::WriteUnit& unit, const auth::Context& ctx, const Change& change) {
  const schema::ClassSchema& cls = *change.cls;
  if (!cls.timeline) return {};
  const json::object& timeline = *cls.timeline;

  // `_Timeline` as this class needs it: made, or grown by an index column, in an exclusive unit.
  // Its own shape is set as the application opens; a write only checks the index columns.
  // An index column `_Timeline` holds with another type (only a store edited by hand; PUT /schemas
  // refuses it, and the application logs it as it opens) is left out of the rows, not the write.
  const schema::ClassSchema* history = unit.schema()->Find(schema::kTimelineClass);
  if (!history || !HasIndexColumns(*history, timeline)) {
    auto needed = TimelineClassFor(*unit.schema(), timeline);
    if (needed.ok() && needed.value()) {
      if (!unit.MayChangeSchema()) return app::WriteUnit::Restarting();
      unit.txn().SaveClass(history, *needed.value());
      unit.ChangeSchema(unit.schema()->With(std::move(*needed.value())));
      history = unit.schema()->Find(schema::kTimelineClass);
    }
    if (!history) return {};  // no history to write to: only a conflict gets here, never in practice
  }

  storage::Row row;
  row.created_at = row.updated_at = change.at;
  row.acl = change.acl;
  std::vector<std::string> columns{"event", "objectClass", "objectIdValue", "Last", "createdBy", "updatedBy"};
  const std::string master(schema::kMasterPlaceholder);
  row.cells = {std::string(EventName(change.event)), cls.name, change.object_id, std::int64_t{1}, master, master};
  auto add = [&](std::string column, storage::Cell cell) {
    columns.push_back(std::move(column));
    row.cells.push_back(std::move(cell));
  };
  if (auto user = TimelineUser(ctx.identity)) add("user", std::move(*user));
  if (change.event != TimelineEvent::kDelete) {
    // Spec §2.6: a deletion row holds no data and no index pointers (it is on no record's card).
    if (change.body) add("data", DataOf(cls, *change.body, ctx.trigger_id));
    // A session user's page, or `server-side-code:<fn>` for a function's writes (which run as the
    // system identity); a key's writes name none (spec §2.6).
    if ((ctx.identity.principal == auth::Principal::kUser || ctx.identity.principal == auth::Principal::kSystem) &&
        !ctx.referer.empty())
      add("Referer", ctx.referer);
    if (const auto* index = timeline.if_contains("index"); index && index->is_object()) {
      for (const auto& kv : index->get_object()) {
        if (!kv.value().is_string()) continue;
        const std::string_view target = kv.value().get_string();
        const auto* column = history->FindField(kv.key());
        if (!column || column->type != schema::FieldType::kPointer || column->target_class != target) continue;
        storage::Cell value;
        if (cls.name == target) {
          value = change.object_id;  // a record of the index's class points at itself
        } else if (const auto* def = cls.FindField(kv.key());
                   def && def->type == schema::FieldType::kPointer && def->target_class == target && change.value_of) {
          value = change.value_of(kv.key());
        }
        if (!storage::IsNull(value)) add(std::string(kv.key()), std::move(value));
      }
    }
  }

  storage::WriteTransaction& txn = unit.txn();
  // A record created under a fresh id has no history yet; any other change takes over `Last`.
  if (change.event != TimelineEvent::kCreate || !change.fresh_id)
    txn.ClearNewestHistoryRow(*history, cls.name, change.object_id);
  storage::InsertWithNewId(txn, *history, columns, row, [](storage::Row&) {});
  return {};
}

}  // namespace crmd::logs
