#include "query/encode.hpp"

#include <algorithm>

#include "schema/codec.hpp"
#include "schema/names.hpp"
#include "util/json.hpp"

namespace crmd::query {

namespace json = boost::json;

json::object EncodeRow(const schema::ClassSchema& cls, const storage::Row& row) {
  json::object out;
  out.reserve(row.cells.size() + 4);
  out["objectId"] = row.object_id;
  out["createdAt"] = row.created_at;
  out["updatedAt"] = row.updated_at;
  // Cells follow the declared fields in order, Relations skipped: walking both in step keeps a row
  // linear in its field count.
  std::size_t i = 0;
  for (const auto& [name, def] : cls.fields) {
    if (def.type == schema::FieldType::kRelation) continue;
    if (i >= row.cells.size()) break;
    const std::size_t at = i++;
    if (schema::IsSecretField(cls.name, name)) continue;
    if (storage::IsNull(row.cells[at])) {
      if (std::find(row.nulls.begin(), row.nulls.end(), name) != row.nulls.end()) out[name] = nullptr;
      continue;
    }
    out[name] = schema::DecodeCell(row.cells[at], def);
  }
  for (const auto& [name, def] : cls.fields)
    if (def.type == schema::FieldType::kRelation)
      out[name] = json::object{{"__type", "Relation"}, {"className", def.target_class}};
  if (row.acl) {
    auto acl = ParseJson(*row.acl);
    if (acl.ok()) out["ACL"] = std::move(acl).value();
  }
  return out;
}

}  // namespace crmd::query
