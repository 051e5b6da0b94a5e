// The field types of spec §2.2 and how each one is named in schemas and in error messages.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace crmd::schema {

enum class FieldType {
  kString,
  kNumber,  // the spec does not name it; Parse's name "Number" is used (docs/COMPATIBILITY.md)
  kBoolean,
  kDate,
  kPointer,
  kRelation,
  kArray,
  kObject,
  kFile,
  kPrivateFile,
  kHtml,  // "HTML/XML": a String that the UI renders as markup
  kAcl,
  kBytes,  // Parse's `{"__type":"Bytes","base64":..}`, kept as its base64 text (issue 36, parseNames gate)
  kGeoPoint,  // Parse's `{"__type":"GeoPoint",..}`, kept as its canonical JSON (schema/geo_value.hpp)
  kPolygon,   // Parse's `{"__type":"Polygon","coordinates":..}`, closed, kept as its canonical JSON
};

std::string_view TypeName(FieldType type);
std::optional<FieldType> ParseTypeName(std::string_view name);

struct FieldDef {
  FieldType type = FieldType::kString;
  std::string target_class;  // Pointer and Relation only

  // As Parse prints a type in a 111 message: `Pointer<Accounts>`, `Date`.
  std::string Describe() const;
  bool operator==(const FieldDef&) const = default;
};

// Types whose values are strings on the wire and in storage.
inline bool IsStringLike(FieldType t) { return t == FieldType::kString || t == FieldType::kHtml; }

}  // namespace crmd::schema
