#include "storage/database.hpp"

namespace crmd::storage {

std::vector<std::string> StoredColumns(const schema::ClassSchema& cls) {
  std::vector<std::string> out;
  out.reserve(cls.fields.size());
  for (const auto& [name, def] : cls.fields)
    if (def.type != schema::FieldType::kRelation) out.push_back(name);
  return out;
}

}  // namespace crmd::storage
