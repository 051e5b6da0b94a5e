#include "query/read.hpp"

#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "app/application.hpp"
#include "auth/acl.hpp"
#include "auth/authorize.hpp"
#include "query/encode.hpp"
#include "query/visibility.hpp"
#include "query/where_parser.hpp"
#include "schema/names.hpp"
#include "storage/record_store.hpp"
#include "util/errors.hpp"
#include "util/json.hpp"
#include "util/strings.hpp"

namespace crmd::query {

namespace json = boost::json;

namespace {

// Rows are encoded, expanded and written this many at a time: include lookups stay batched while
// memory stays bounded by the chunk, not the result.
constexpr std::size_t kStreamChunk = 1000;

// Dotted paths as a tree: {"AccountId": {"StatusId": {}}}. Used for include and for keys.
struct PathTree {
  std::map<std::string, PathTree, std::less<>> children;
};

PathTree BuildTree(const std::vector<std::string>& paths) {
  PathTree root;
  for (const auto& path : paths) {
    PathTree* node = &root;
    for (auto part : Split(path, '.')) node = &node->children[std::string(part)];
  }
  return root;
}

// The include tree of a read of `cls`: `*` stands for every Pointer and Array field of the class,
// one level (Parse's includeAll), beside any path also named.
PathTree BuildIncludeTree(const std::vector<std::string>& paths, const schema::ClassSchema& cls) {
  PathTree root = BuildTree(paths);
  if (root.children.erase(std::string(kIncludeAll)) == 0) return root;
  for (const auto& [name, def] : cls.fields)
    if (def.type == schema::FieldType::kPointer || def.type == schema::FieldType::kArray) root.children[name];
  return root;
}

// Kept whatever the projection says: the record fields, and on an included object the tags
// that make it one (a user field named `className` is projected like any other at the top).
bool AlwaysKept(std::string_view key, bool included) {
  return key == "objectId" || key == "createdAt" || key == "updatedAt" ||
         (included && (key == "__type" || key == "className"));
}

// Keeps only the keys the projection names. A key with children projects inside the included
// object it holds.
void Project(json::object& obj, const PathTree& keys, bool included = false) {
  for (auto it = obj.begin(); it != obj.end();) {
    const std::string_view key = it->key();
    auto spec = keys.children.find(key);
    if (spec == keys.children.end()) {
      if (AlwaysKept(key, included)) ++it;
      else it = obj.erase(it);
      continue;
    }
    if (!spec->second.children.empty() && it->value().is_object())
      Project(it->value().get_object(), spec->second, true);
    ++it;
  }
}

std::string_view PointerClass(const json::value& v) {
  const auto* c = v.is_object() ? v.get_object().if_contains("className") : nullptr;
  return c && c->is_string() ? std::string_view(c->get_string()) : std::string_view();
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
// The class an included field points at; null when the field is no Pointer (Parse ignores
// those) or its class is gone.
const schema::ClassSchema* IncludedClass(const schema::Snapshot& snapshot, const schema::ClassSchema& cls,
                                         const std::string& field) {
  const auto* def = cls.FindField(field);
  if (!def || def->type != schema::FieldType::kPointer) return nullptr;
  return snapshot.Find(def->target_class);
}

// The records of `target` named by `ids` that an include shows the caller. An included record is
// read through the same door as a direct get: none when the class is closed to the caller, and
// a record its ACL hides is left out (its pointer stays a Pointer, as a direct get answers 404).
std::vector<storage::Row> ReadableIncluded(const auth::Context& ctx, const schema::Snapshot& snapshot,
                                           const schema::ClassSchema& target, const std::unordered_set<std::string>& ids) {
  if (ids.empty()) return {};
  if (!auth::Authorize(ctx.identity, auth::Operation::kGet, target.name, &target).ok()) return {};
  auto found = ctx.app->db().GetMany(target, {ids.begin(), ids.end()});
  if (ctx.identity.SkipsAcl()) return std::move(found.rows);
  const ReadableRows readable(ctx.identity, snapshot);
  std::vector<storage::Row> out;
  for (auto& row : found.rows)
    if (readable.Allows(target, row)) out.push_back(std::move(row));
  return out;
}

// The expanded form of a record: `{"__type":"Object","className":...}` and its fields.
json::object IncludedObject(const schema::ClassSchema& target, const storage::Row& row) {
  auto encoded = EncodeRow(target, row);
  json::object expanded{{"__type", "Object"}, {"className", target.name}};
  for (auto& kv : encoded) expanded[kv.key()] = std::move(kv.value());
  return expanded;
}

void Expand(const auth::Context& ctx, const schema::Snapshot& snapshot, const schema::ClassSchema& cls,
            const std::vector<json::object*>& objects, const PathTree& tree);

// The Pointers held in the Array `field` of `objects` replaced by their records, one batched lookup
// per class they name (an Array may point at several); deeper paths go on from those records.
void ExpandArrays(const auth::Context& ctx, const schema::Snapshot& snapshot, const std::string& field,
                  const std::vector<json::object*>& objects, const PathTree& subtree) {
  std::map<std::string, std::unordered_set<std::string>, std::less<>> wanted;  // class -> ids
  for (auto* obj : objects) {
    auto* v = obj->if_contains(field);
    if (!v || !v->is_array()) continue;
    for (const auto& item : v->get_array())
      if (!PointerId(item).empty()) wanted[std::string(PointerClass(item))].emplace(PointerId(item));
  }
  for (const auto& [class_name, ids] : wanted) {
    const auto* target = snapshot.Find(class_name);
    if (!target) continue;
    std::unordered_map<std::string, json::object> found;
    for (const auto& row : ReadableIncluded(ctx, snapshot, *target, ids)) found.emplace(row.object_id, IncludedObject(*target, row));
    std::vector<json::object*> next;
    for (auto* obj : objects) {
      auto* v = obj->if_contains(field);
      if (!v || !v->is_array()) continue;
      for (auto& item : v->get_array()) {
        if (PointerClass(item) != class_name) continue;
        auto it = found.find(std::string(PointerId(item)));
        if (it == found.end()) continue;  // hidden or dangling: left a Pointer, as a single one is
        item = it->second;
        next.push_back(&item.get_object());
      }
    }
    if (!subtree.children.empty()) Expand(ctx, snapshot, *target, next, subtree);
  }
}

void Expand(const auth::Context& ctx, const schema::Snapshot& snapshot,
            const schema::ClassSchema& cls, const std::vector<json::object*>& objects,
            const PathTree& tree) {
  for (const auto& [field, subtree] : tree.children) {
    if (const auto* def = cls.FindField(field); def && def->type == schema::FieldType::kArray) {
      ExpandArrays(ctx, snapshot, field, objects, subtree);
      continue;
    }
    const auto* target = IncludedClass(snapshot, cls, field);
    if (!target) continue;
    std::unordered_set<std::string> unique;
    for (auto* obj : objects)
      if (auto* v = obj->if_contains(field); v && !PointerId(*v).empty())
        unique.emplace(PointerId(*v));
    std::unordered_map<std::string, json::object> found;
    for (const auto& row : ReadableIncluded(ctx, snapshot, *target, unique))
      found.emplace(row.object_id, IncludedObject(*target, row));
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

// An include the text path can answer: pointer fields one level deep, no projection, and targets
// whose fields cannot collide with an included record's `__type` and `className`.
bool IsFlatInclude(const schema::Snapshot& snapshot, const schema::ClassSchema& cls, const PathTree& include) {
  for (const auto& [field, subtree] : include.children) {
    if (!subtree.children.empty()) return false;
    if (const auto* def = cls.FindField(field); def && def->type == schema::FieldType::kArray) return false;
    const auto* target = IncludedClass(snapshot, cls, field);
    if (target && (target->FindField("className") || target->FindField("__type"))) return false;
  }
  return true;
}

// The records a chunk of rows points at through the flat `include` (its Pointers as noted while
// the rows were written), as text: one batched lookup per field, under the same checks as Expand.
Expansions LookUpIncluded(const auth::Context& ctx, const schema::Snapshot& snapshot,
                          const schema::ClassSchema& cls, const std::vector<PointerSpan>& spans,
                          const PathTree& include) {
  Expansions out;
  for (const auto& [field, subtree] : include.children) {
    const auto* target = IncludedClass(snapshot, cls, field);
    if (!target) continue;
    std::unordered_set<std::string> unique;
    for (const auto& span : spans)
      if (span.field == field) unique.insert(span.id);
    auto readable = ReadableIncluded(ctx, snapshot, *target, unique);
    if (readable.empty()) continue;
    auto& records = out[field];
    for (const auto& row : readable) {
      std::string text;
      WriteIncludedRow(*target, row, text);
      records.emplace(row.object_id, std::move(text));
    }
  }
  return out;
}

// Order keys the class can sort by; an undeclared field orders nothing (Parse on MongoDB) and
// never reaches SQL.
std::vector<std::pair<std::string, bool>> SortableOrder(const schema::ClassSchema& cls,
                                                        const std::vector<std::pair<std::string, bool>>& order) {
  std::vector<std::pair<std::string, bool>> out;
  for (const auto& [field, descending] : order) {
    const auto* def = cls.FindField(field);
    bool builtin = field == "objectId" || field == "createdAt" || field == "updatedAt";
    if (builtin || (def && def->type != schema::FieldType::kRelation &&
                    !schema::IsSecretField(cls.name, field)))
      out.emplace_back(field, descending);
  }
  return out;
}

Result<std::vector<std::string>> ParsePaths(std::string_view text, std::size_t max_depth,
                                            const ApiError& error_for_bad, bool allow_all) {
  std::vector<std::string> out;
  for (auto path : Split(text, ',')) {
    if (path.empty()) continue;
    if (allow_all && path == kIncludeAll) {
      out.emplace_back(path);
      continue;
    }
    auto parts = Split(path, '.');
    if (parts.size() > max_depth) return error_for_bad;
    for (auto part : parts)
      if (!schema::IsValidFieldName(part) && part != "objectId" && part != "createdAt" &&
          part != "updatedAt")
        return error_for_bad;
    out.emplace_back(path);
  }
  return out;
}

}  // namespace

Result<std::vector<std::string>> ParseIncludeList(std::string_view text) {
  return ParsePaths(text, kMaxIncludeDepth, errors::InvalidQueryParameter("include"), true);
}

Result<std::vector<std::string>> ParseKeysList(std::string_view text) {
  for (auto path : Split(text, ','))
    for (auto part : Split(path, '.'))
      if (!path.empty() && !schema::IsValidFieldName(part) && part != "objectId" &&
          part != "createdAt" && part != "updatedAt")
        return errors::InvalidFieldName(part);
  return ParsePaths(text, kMaxIncludeDepth + 1, errors::InvalidQueryParameter("keys"), false);
}

namespace {

// One record a get may answer: the class permits `get` and the record's ACL lets the caller read.
struct Readable {
  std::shared_ptr<const schema::Snapshot> snapshot;
  const schema::ClassSchema* cls;
  storage::Row row;
};

Result<Readable> FetchReadable(auth::Context& ctx, std::string_view class_name, std::string_view object_id) {
  auto snapshot = ctx.app->schema();
  const auto* cls = snapshot->Find(class_name);
  CRMD_TRY(auth::Authorize(ctx.identity, auth::Operation::kGet, class_name, cls));
  if (!cls) return errors::ObjectNotFound();
  auto row = ctx.app->db().Get(*cls, object_id);
  if (!row) return errors::ObjectNotFound();
  if (!ReadableRows(ctx.identity, *snapshot).Allows(*cls, *row))
    return errors::ObjectNotFound();  // hidden and missing look the same (spec §7)
  return Readable{std::move(snapshot), cls, std::move(*row)};
}

}  // namespace

Result<json::object> GetRecord(auth::Context& ctx, std::string_view class_name,
                               std::string_view object_id, const std::vector<std::string>& include,
                               const std::optional<std::vector<std::string>>& keys) {
  CRMD_ASSIGN(auto found, FetchReadable(ctx, class_name, object_id));
  json::object out = EncodeRow(*found.cls, found.row);
  if (!include.empty()) Expand(ctx, *found.snapshot, *found.cls, {&out}, BuildIncludeTree(include, *found.cls));
  if (keys) Project(out, BuildTree(*keys));
  return out;
}

Status WriteRecord(auth::Context& ctx, std::string_view class_name, std::string_view object_id,
                   const std::vector<std::string>& include, const std::optional<std::vector<std::string>>& keys,
                   std::string& out) {
  if (!include.empty() || keys) {
    CRMD_ASSIGN(auto object, GetRecord(ctx, class_name, object_id, include, keys));
    WriteJson(object, out);
    return {};
  }
  CRMD_ASSIGN(auto found, FetchReadable(ctx, class_name, object_id));
  WriteRow(*found.cls, found.row, out);
  return {};
}

Status ListRecords(auth::Context& ctx, std::string_view class_name, const ListRequest& request,
                   std::string& out) {
  auto snapshot = ctx.app->schema();
  const auto* cls = snapshot->Find(class_name);
  CRMD_TRY(auth::Authorize(ctx.identity, auth::Operation::kFind, class_name, cls));
  if (request.count) CRMD_TRY(auth::Authorize(ctx.identity, auth::Operation::kCount, class_name, cls));

  Query query;
  if (request.where) {
    // A class that does not exist has no rows, but its where is still checked: a malformed one is
    // the same error whatever the class (Parse validates a query before it looks at the schema).
    schema::ClassSchema missing;
    missing.name = std::string(class_name);
    CRMD_ASSIGN(auto where, ParseWhere(*request.where, cls ? *cls : missing, *snapshot, ctx.identity));
    if (cls) query.where = std::move(where);
  }
  if (cls) LimitToReadable(ctx.identity, *snapshot, *cls, query);
  out += "{\"results\":[";
  if (cls && request.limit != 0) {
    query.order = SortableOrder(*cls, request.order);
    // Parse sorts a `$nearSphere` query nearest first unless it names an order.
    if (query.order.empty() && query.where) query.nearest = schema::NearSort(*query.where);
    query.limit = request.limit;
    query.skip = request.skip;
    const PathTree include = BuildIncludeTree(request.include, *cls);
    const std::optional<PathTree> keys =
        request.keys ? std::optional<PathTree>(BuildTree(*request.keys)) : std::nullopt;
    std::vector<json::object> chunk;
    chunk.reserve(std::min<std::size_t>(kStreamChunk, static_cast<std::size_t>(request.limit)));
    bool first = true;
    auto flush = [&] {
      if (!include.children.empty()) {
        std::vector<json::object*> pointers;
        pointers.reserve(chunk.size());
        for (auto& o : chunk) pointers.push_back(&o);
        Expand(ctx, *snapshot, *cls, pointers, include);
      }
      for (auto& o : chunk) {
        if (keys) Project(o, *keys);
        if (!first) out.push_back(',');
        first = false;
        WriteJson(o, out);
      }
      chunk.clear();
    };
    const bool plain = include.children.empty() && !keys;
    // Include without keys, one level deep: rows are written as text at once, like the plain
    // path, and each chunk's Pointers replaced by their records once those are looked up.
    const bool flat_include = !plain && !keys && IsFlatInclude(*snapshot, *cls, include);
    std::vector<std::string> included;
    for (const auto& [field, subtree] : include.children) included.push_back(field);
    std::string pending;
    std::vector<PointerSpan> spans;
    std::size_t pending_rows = 0;
    auto flush_text = [&] {
      SpliceIncluded(pending, spans, LookUpIncluded(ctx, *snapshot, *cls, spans, include), out);
      pending.clear();
      spans.clear();
      pending_rows = 0;
    };
    ctx.app->db().Find(*cls, query, [&](storage::Row& row) {
      if (plain) {
        if (!first) out.push_back(',');
        first = false;
        WriteRow(*cls, row, out);
        return true;
      }
      if (flat_include) {
        if (!first) pending.push_back(',');
        first = false;
        WriteRow(*cls, row, included, spans, pending);
        if (++pending_rows == kStreamChunk) flush_text();
        return true;
      }
      chunk.push_back(EncodeRow(*cls, row));
      if (chunk.size() == kStreamChunk) flush();
      return true;
    });
    if (flat_include) flush_text();
    else flush();
  }
  out += "]";
  if (request.count) {
    const std::int64_t total = cls ? ctx.app->db().Count(*cls, query) : 0;
    out += ",\"count\":" + std::to_string(total);
  }
  out += "}";
  return {};
}

}  // namespace crmd::query
