#include "query/read.hpp"

#include <map>
#include <unordered_map>
#include <unordered_set>

#include "app/application.hpp"
#include "auth/authorize.hpp"
#include "query/encode.hpp"
#include "schema/names.hpp"
#include "util/errors.hpp"
#include "util/strings.hpp"

namespace crmd::query {

namespace json = boost::json;

namespace {

// Include paths as a tree: {"AccountId": {"StatusId": {}}}.
struct IncludeTree {
  std::map<std::string, IncludeTree> children;
};

IncludeTree BuildTree(const std::vector<std::string>& paths) {
  IncludeTree root;
  for (const auto& path : paths) {
    IncludeTree* node = &root;
    for (auto part : Split(path, '.')) node = &node->children[std::string(part)];
  }
  return root;
}

std::string_view PointerId(const json::value& v) {
  if (!v.is_object()) return {};
  const auto& o = v.get_object();
  const auto* t = o.if_contains("__type");
  const auto* id = o.if_contains("objectId");
  if (!t || !id || !t->is_string() || t->get_string() != "Pointer" || !id->is_string()) return {};
  return id->get_string();
}

// Replaces Pointer values in `objects` by the records they point at, level by level.
void Expand(const auth::Context& ctx, const schema::Snapshot& snapshot,
            const schema::ClassSchema& cls, const std::vector<json::object*>& objects,
            const IncludeTree& tree) {
  for (const auto& [field, subtree] : tree.children) {
    const auto* def = cls.FindField(field);
    if (!def || def->type != schema::FieldType::kPointer) continue;  // Parse ignores these
    const auto* target = snapshot.Find(def->target_class);
    if (!target) continue;
    // An included record is read through the same door as a direct get; a pointer the caller may
    // not follow stays a Pointer. (Record ACLs join this check with the permissions issue.)
    if (!auth::Authorize(ctx.identity, auth::Operation::kGet, target->name, target).ok()) continue;
    std::unordered_set<std::string> unique;
    for (auto* obj : objects)
      if (auto* v = obj->if_contains(field); v && !PointerId(*v).empty())
        unique.emplace(PointerId(*v));
    if (unique.empty()) continue;
    auto rows = ctx.app->db().GetMany(*target, {unique.begin(), unique.end()});
    std::unordered_map<std::string, json::object> found;
    for (const auto& row : rows.rows) {
      auto encoded = EncodeRow(*target, rows.columns, row);
      json::object expanded{{"__type", "Object"}, {"className", target->name}};
      for (auto& kv : encoded) expanded[kv.key()] = std::move(kv.value());
      found.emplace(row.object_id, std::move(expanded));
    }
    std::vector<json::object*> next;
    for (auto* obj : objects) {
      auto* v = obj->if_contains(field);
      if (!v) continue;
      auto it = found.find(std::string(PointerId(*v)));
      if (it == found.end()) continue;  // dangling pointer: left as a Pointer (Parse)
      *v = it->second;
      next.push_back(&v->get_object());
    }
    if (!subtree.children.empty()) Expand(ctx, snapshot, *target, next, subtree);
  }
}

}  // namespace

Result<std::vector<std::string>> ParseIncludeList(std::string_view text) {
  std::vector<std::string> out;
  for (auto path : Split(text, ',')) {
    if (path.empty()) continue;
    auto parts = Split(path, '.');
    if (parts.size() > kMaxIncludeDepth) return errors::InvalidQueryParameter("include");
    for (auto part : parts)
      if (!schema::IsValidFieldName(part)) return errors::InvalidQueryParameter("include");
    out.emplace_back(path);
  }
  return out;
}

Result<json::object> GetRecord(auth::Context& ctx, std::string_view class_name,
                               std::string_view object_id, const std::vector<std::string>& include) {
  auto snapshot = ctx.app->schema();
  const auto* cls = snapshot->Find(class_name);
  CRMD_TRY(auth::Authorize(ctx.identity, auth::Operation::kGet, class_name, cls));
  if (!cls) return errors::ObjectNotFound();
  auto row = ctx.app->db().Get(*cls, object_id);
  if (!row) return errors::ObjectNotFound();
  json::object out = EncodeRow(*cls, storage::StoredColumns(*cls), *row);
  if (!include.empty()) Expand(ctx, *snapshot, *cls, {&out}, BuildTree(include));
  return out;
}

Result<json::object> ListRecords(auth::Context& ctx, std::string_view class_name,
                                 const ListRequest& request) {
  auto snapshot = ctx.app->schema();
  const auto* cls = snapshot->Find(class_name);
  CRMD_TRY(auth::Authorize(ctx.identity, auth::Operation::kFind, class_name, cls));
  json::array results;
  if (cls && request.find.limit > 0) {
    storage::FindOptions find = request.find;
    // Sorting by an undeclared field orders nothing (Parse on MongoDB); it never reaches SQL.
    std::erase_if(find.order, [&](const storage::OrderKey& k) {
      return k.field != "objectId" && k.field != "createdAt" && k.field != "updatedAt" &&
             (!cls->FindField(k.field) || cls->FindField(k.field)->type == schema::FieldType::kRelation);
    });
    auto rows = ctx.app->db().Find(*cls, find);
    std::vector<json::object> objects;
    objects.reserve(rows.rows.size());
    for (const auto& row : rows.rows) objects.push_back(EncodeRow(*cls, rows.columns, row));
    if (!request.include.empty()) {
      std::vector<json::object*> pointers;
      for (auto& o : objects) pointers.push_back(&o);
      Expand(ctx, *snapshot, *cls, pointers, BuildTree(request.include));
    }
    results.reserve(objects.size());
    for (auto& o : objects) results.emplace_back(std::move(o));
  }
  return json::object{{"results", std::move(results)}};
}

}  // namespace crmd::query
