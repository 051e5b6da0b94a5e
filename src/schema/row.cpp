#include "schema/row.hpp"

#include "schema/class_schema.hpp"

namespace crmd::schema {

std::vector<std::string> StoredColumns(const ClassSchema& cls) {
  std::vector<std::string> out;
  out.reserve(cls.fields.size());
  for (const auto& [name, def] : cls.fields)
    if (def.type != FieldType::kRelation) out.push_back(name);
  return out;
}

Cell CellOf(const ClassSchema& cls, const Row& row, std::string_view field) {
  std::size_t i = 0;
  for (const auto& [name, def] : cls.fields) {
    if (def.type == FieldType::kRelation) continue;
    if (i >= row.cells.size()) break;
    if (name == field) return row.cells[i];
    ++i;
  }
  return std::monostate{};
}

std::string TextOf(const ClassSchema& cls, const Row& row, std::string_view field) {
  Cell cell = CellOf(cls, row, field);
  auto* text = std::get_if<std::string>(&cell);
  return text ? std::move(*text) : std::string();
}

}  // namespace crmd::schema
