#include "write/prepare_application.hpp"

#include <stdexcept>

#include "app/write_unit.hpp"
#include "logs/timeline.hpp"
#include "schema/log_classes.hpp"
#include "schema/system_classes.hpp"
#include "util/ids.hpp"
#include "util/log.hpp"
#include "util/time.hpp"
#include "write/phone_keys.hpp"

namespace crmd::write {

namespace {

using schema::kUserClass;

// `_User` with the fields of this release's definition that an older one lacks.
std::optional<schema::ClassSchema> UpgradedUserClass(const schema::ClassSchema& existing) {
  std::optional<schema::ClassSchema> out;
  for (auto& wanted : schema::SystemClasses()) {
    if (wanted.name != kUserClass) continue;
    for (auto& field : wanted.fields) {
      if (existing.FindField(field.first)) continue;
      if (!out) out = existing;
      out->fields.push_back(std::move(field));
    }
  }
  return out;
}

std::optional<std::string> FindSystemUser(storage::WriteTransaction& txn, const schema::ClassSchema& users) {
  if (!users.FindField(schema::kSystemUserFlag)) return std::nullopt;
  auto row = storage::FindFirst(txn, users, schema::kSystemUserFlag, std::int64_t{1});
  if (!row) return std::nullopt;
  return row->object_id;
}

std::optional<std::string> FindSystemUser(storage::RecordStore& db, const schema::ClassSchema& users) {
  if (!users.FindField(schema::kSystemUserFlag)) return std::nullopt;
  auto row = storage::FindFirst(db, users, schema::kSystemUserFlag, std::int64_t{1});
  if (!row) return std::nullopt;
  return row->object_id;
}

// The classes whose shape must change, against `snapshot`: `_User`, `_Timeline`.
std::vector<std::pair<const schema::ClassSchema*, schema::ClassSchema>> ClassChanges(const schema::Snapshot& snapshot) {
  std::vector<std::pair<const schema::ClassSchema*, schema::ClassSchema>> out;
  const auto* users = snapshot.Find(kUserClass);
  if (auto upgraded = users ? UpgradedUserClass(*users) : std::nullopt) out.emplace_back(users, std::move(*upgraded));
  // The history: its own shape, then the index columns of every class that keeps one.
  auto current = std::make_shared<const schema::Snapshot>(snapshot.classes());
  if (const auto* history = snapshot.Find(schema::kTimelineClass)) {
    if (auto upgraded = schema::UpgradedTimelineClass(*history)) current = current->With(std::move(*upgraded));
  }
  for (const auto& [name, cls] : snapshot.classes()) {
    if (!cls->timeline) continue;
    auto needed = logs::TimelineClassFor(*current, *cls->timeline);
    if (!needed.ok()) {
      log::Warn("a timeline index conflicts with _Timeline; its rows will not carry it",
                {{"class", name}, {"error", needed.error().message}});
      continue;
    }
    if (needed.value()) current = current->With(std::move(*needed.value()));
  }
  // `current` holds the snapshot's own definition unless one was made above: compared as JSON
  // only then (every open of an application asks).
  const auto* before = snapshot.Find(schema::kTimelineClass);
  if (const auto* after = current->Find(schema::kTimelineClass);
      after && after != before && (!before || after->ToJson() != before->ToJson()))
    out.emplace_back(before, *after);
  return out;
}

}  // namespace

void PrepareApplication(app::Application& app) {
  EnsurePhoneIndex(app);
  {
    // Most opens: nothing to do, and no write to find that out.
    auto snapshot = app.schema();
    const auto* users = snapshot->Find(kUserClass);
    auto system_user = users ? FindSystemUser(app.db(), *users) : std::nullopt;
    if (system_user && ClassChanges(*snapshot).empty()) {
      app.SetSystemUserId(*system_user);
      return;
    }
  }
  auth::Context ctx;
  ctx.app = std::shared_ptr<app::Application>(&app, [](app::Application*) {});  // borrowed
  ctx.identity = auth::Identity::System();
  auto prepared = app::RunWrite(ctx, [&](app::WriteUnit& unit) -> Result<std::string> {
    auto next = unit.schema();
    for (auto& [before, after] : ClassChanges(*next)) {
      unit.txn().SaveClass(before, after);
      next = next->With(std::move(after));
    }
    unit.ChangeSchema(next);
    const auto& users = *next->Find(kUserClass);
    if (auto existing = FindSystemUser(unit.txn(), users)) return *existing;
    // Named Master, as the history names its writes; another name when a user holds that one.
    std::string username(schema::kMasterPlaceholder);
    if (storage::FindFirst(unit.txn(), users, "username", username)) username += "-" + ids::RandomAlnum(6);
    storage::Row row;
    row.created_at = row.updated_at = timeutil::NowIso();
    row.acl = "{}";  // nobody's: only keys see it
    row.cells = {username, std::string(schema::kMasterPlaceholder), std::int64_t{1}};
    storage::InsertWithNewId(unit.txn(), users, {"username", "name", schema::kSystemUserFlag}, row,
                             [](storage::Row&) {});
    return row.object_id;
  }, app::WriteStart::kExclusive);
  if (!prepared.ok()) throw std::runtime_error("preparing application " + app.id() + ": " + prepared.error().message);
  app.SetSystemUserId(prepared.value());
}

}  // namespace crmd::write
