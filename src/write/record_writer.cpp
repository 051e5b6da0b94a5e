#include "write/record_writer.hpp"

#include <algorithm>

#include "app/application.hpp"
#include "auth/authorize.hpp"
#include "schema/names.hpp"
#include "storage/database.hpp"
#include "util/errors.hpp"
#include "util/ids.hpp"
#include "util/time.hpp"
#include "write/field_changes.hpp"

namespace crmd::write {

namespace json = boost::json;

namespace {

void Remove(std::vector<std::string>& list, const std::string& item) {
  list.erase(std::remove(list.begin(), list.end(), item), list.end());
}

// Applies the null bookkeeping of `changes` to a row's null list.
void UpdateNulls(std::vector<std::string>& nulls, const FieldChanges& changes) {
  for (const auto& f : changes.cleared) Remove(nulls, f);
  for (const auto& f : changes.set_null)
    if (std::find(nulls.begin(), nulls.end(), f) == nulls.end()) nulls.push_back(f);
}

// Authorisation against the schema as it is now, before taking the write lock, so refused
// requests never queue behind writers.
Status Precheck(const auth::Context& ctx, auth::Operation op, std::string_view class_name) {
  auto snapshot = ctx.app->schema();
  return auth::Authorize(ctx.identity, op, class_name, snapshot->Find(class_name));
}

}  // namespace

Result<json::object> CreateRecord(auth::Context& ctx, std::string_view class_name,
                                  const json::object& body) {
  CRMD_TRY(Precheck(ctx, auth::Operation::kCreate, class_name));
  app::Application& app = *ctx.app;
  auto txn = app.db().BeginWrite();
  auto snapshot = app.schema();
  const schema::ClassSchema* existing = snapshot->Find(class_name);
  if (!existing) {
    for (const auto& [name, other] : snapshot->classes())
      if (schema::EqualsIgnoringCase(name, class_name))
        return errors::ClassNameCaseCollision(class_name, name);
  }
  schema::ClassSchema cls =
      existing ? *existing : schema::ClassSchema::NewImplicit(std::string(class_name));

  CRMD_ASSIGN(auto changes, CollectChanges(body, cls, ctx.identity, WriteKind::kCreate, {}, {}));

  storage::Row row;
  if (changes.object_id) {
    if (existing && txn->Exists(*existing, *changes.object_id)) return errors::DuplicateObjectId();
    row.object_id = *changes.object_id;
  } else {
    row.object_id = ids::NewObjectId();
  }
  row.created_at = row.updated_at = timeutil::NowIso();
  if (changes.acl) row.acl = *changes.acl;
  UpdateNulls(row.nulls, changes);
  row.cells = std::move(changes.cells);

  if (!existing || changes.schema_changed) txn->SaveClass(existing, cls);
  txn->Insert(cls, changes.columns, row);
  for (const auto& rel : changes.relations) txn->ChangeRelation(cls, rel.field, row.object_id, rel.ids, rel.add);
  txn->Commit();
  if (!existing || changes.schema_changed) app.Publish(snapshot->With(std::move(cls)));
  return json::object{{"objectId", row.object_id}, {"createdAt", row.created_at}};
}

Result<json::object> UpdateRecord(auth::Context& ctx, std::string_view class_name,
                                  std::string_view object_id, const json::object& body) {
  CRMD_TRY(Precheck(ctx, auth::Operation::kUpdate, class_name));
  app::Application& app = *ctx.app;
  auto txn = app.db().BeginWrite();
  auto snapshot = app.schema();
  const schema::ClassSchema* existing = snapshot->Find(class_name);
  if (!existing) return errors::ObjectNotFound();
  auto current = txn->Get(*existing, object_id);
  if (!current) return errors::ObjectNotFound();
  // Record ACL (write) is enforced here by the permissions issue, through auth/.

  schema::ClassSchema cls = *existing;
  CRMD_ASSIGN(auto changes, CollectChanges(body, cls, ctx.identity, WriteKind::kUpdate, object_id,
                                           CurrentValues(*existing, *current)));

  storage::Row row;
  row.object_id = current->object_id;
  row.updated_at = timeutil::NowIso();
  row.acl = changes.acl ? *changes.acl : current->acl;
  row.nulls = current->nulls;
  UpdateNulls(row.nulls, changes);
  row.cells = std::move(changes.cells);

  if (changes.schema_changed) txn->SaveClass(existing, cls);
  txn->Update(cls, changes.columns, row);
  for (const auto& rel : changes.relations) txn->ChangeRelation(cls, rel.field, row.object_id, rel.ids, rel.add);
  txn->Commit();
  if (changes.schema_changed) app.Publish(snapshot->With(std::move(cls)));

  json::object out{{"updatedAt", row.updated_at}, {"objectId", row.object_id}};
  for (auto& kv : changes.echoed) out[kv.key()] = std::move(kv.value());
  return out;
}

Result<json::object> DeleteRecord(auth::Context& ctx, std::string_view class_name,
                                  std::string_view object_id) {
  CRMD_TRY(Precheck(ctx, auth::Operation::kDelete, class_name));
  app::Application& app = *ctx.app;
  auto txn = app.db().BeginWrite();
  auto snapshot = app.schema();
  const schema::ClassSchema* cls = snapshot->Find(class_name);
  if (!cls || !txn->Exists(*cls, object_id)) return errors::ObjectNotFound();
  if (auto ref = txn->FindReference(*snapshot, class_name, object_id))
    return errors::PointerExists(object_id, ref->table, ref->field);
  txn->Delete(*cls, object_id);
  txn->Commit();
  return json::object{};
}

}  // namespace crmd::write
