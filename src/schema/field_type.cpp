#include "schema/field_type.hpp"

#include <array>
#include <utility>

namespace crmd::schema {

namespace {
constexpr std::array<std::pair<FieldType, std::string_view>, 15> kNames{{
    {FieldType::kString, "String"},
    {FieldType::kNumber, "Number"},
    {FieldType::kBoolean, "Boolean"},
    {FieldType::kDate, "Date"},
    {FieldType::kPointer, "Pointer"},
    {FieldType::kRelation, "Relation"},
    {FieldType::kArray, "Array"},
    {FieldType::kObject, "Object"},
    {FieldType::kFile, "File"},
    {FieldType::kPrivateFile, "PrivateFile"},
    {FieldType::kHtml, "HTML/XML"},
    {FieldType::kAcl, "ACL"},
    {FieldType::kBytes, "Bytes"},
    {FieldType::kGeoPoint, "GeoPoint"},
    {FieldType::kPolygon, "Polygon"},
}};
}  // namespace

std::string_view TypeName(FieldType type) {
  for (const auto& [t, name] : kNames)
    if (t == type) return name;
  return "String";
}

std::optional<FieldType> ParseTypeName(std::string_view name) {
  for (const auto& [t, n] : kNames)
    if (n == name) return t;
  return std::nullopt;
}

std::string FieldDef::Describe() const {
  std::string out(TypeName(type));
  if (type == FieldType::kPointer || type == FieldType::kRelation) out += "<" + target_class + ">";
  return out;
}

}  // namespace crmd::schema
