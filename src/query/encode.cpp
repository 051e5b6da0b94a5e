#include "query/encode.hpp"

#include <algorithm>

#include "schema/codec.hpp"
#include "util/json.hpp"

namespace crmd::query {

namespace json = boost::json;

json::object EncodeRow(const schema::ClassSchema& cls, const std::vector<std::string>& columns,
                       const storage::Row& row) {
  json::object out;
  out.reserve(columns.size() + 4);
  out["objectId"] = row.object_id;
  out["createdAt"] = row.created_at;
  out["updatedAt"] = row.updated_at;
  for (std::size_t i = 0; i < columns.size() && i < row.cells.size(); ++i) {
    const auto* def = cls.FindField(columns[i]);
    if (!def) continue;
    if (storage::IsNull(row.cells[i])) {
      if (std::find(row.nulls.begin(), row.nulls.end(), columns[i]) != row.nulls.end())
        out[columns[i]] = nullptr;
      continue;
    }
    out[columns[i]] = schema::DecodeCell(row.cells[i], *def);
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
