#include "schema/codec.hpp"

#include "schema/geo_value.hpp"
#include "util/errors.hpp"
#include "util/ids.hpp"
#include "util/json.hpp"
#include "util/time.hpp"

namespace crmd::schema {

namespace json = boost::json;

namespace {

// Longest objectId accepted in a Pointer (ids supplied with the master key may exceed 10).
constexpr std::size_t kMaxPointerIdLength = 64;

std::string_view TypeTag(const json::object& o) {
  const auto* t = o.if_contains("__type");
  return t && t->is_string() ? std::string_view(t->get_string()) : std::string_view();
}

std::string_view StringMember(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v && v->is_string() ? std::string_view(v->get_string()) : std::string_view();
}

ApiError Mismatch(std::string_view table, std::string_view field, const FieldDef& def,
                  const json::value& value) {
  return errors::SchemaMismatch(table, field, def.Describe(), DescribeValue(value));
}

std::string NumberText(const json::value& v) {
  if (v.is_int64()) return std::to_string(v.get_int64());
  if (v.is_uint64()) return std::to_string(v.get_uint64());
  return FormatNumber(v.get_double());
}

}  // namespace

std::string DescribeValue(const json::value& value) {
  switch (value.kind()) {
    case json::kind::null: return "null";
    case json::kind::bool_: return "Boolean";
    case json::kind::int64:
    case json::kind::uint64:
    case json::kind::double_: return "Number";
    case json::kind::string: return "String";
    case json::kind::array: return "Array";
    case json::kind::object: {
      const auto& o = value.get_object();
      auto tag = TypeTag(o);
      if (tag == "Pointer" || tag == "Relation")
        return std::string(tag) + "<" + std::string(StringMember(o, "className")) + ">";
      if (!tag.empty()) return std::string(tag);
      return "Object";
    }
  }
  return "Object";
}

Result<std::optional<FieldDef>> InferFieldType(const json::value& value, std::string_view table,
                                               std::string_view field) {
  switch (value.kind()) {
    case json::kind::null: return std::optional<FieldDef>();
    case json::kind::bool_: return std::optional<FieldDef>(FieldDef{FieldType::kBoolean, {}});
    case json::kind::int64:
    case json::kind::uint64:
    case json::kind::double_: return std::optional<FieldDef>(FieldDef{FieldType::kNumber, {}});
    case json::kind::string: return std::optional<FieldDef>(FieldDef{FieldType::kString, {}});
    case json::kind::array: return std::optional<FieldDef>(FieldDef{FieldType::kArray, {}});
    case json::kind::object: {
      const auto& o = value.get_object();
      auto tag = TypeTag(o);
      if (tag.empty()) return std::optional<FieldDef>(FieldDef{FieldType::kObject, {}});
      if (tag == "Date") return std::optional<FieldDef>(FieldDef{FieldType::kDate, {}});
      if (tag == "File") return std::optional<FieldDef>(FieldDef{FieldType::kFile, {}});
      if (tag == "Bytes") return std::optional<FieldDef>(FieldDef{FieldType::kBytes, {}});
      if (tag == "GeoPoint") return std::optional<FieldDef>(FieldDef{FieldType::kGeoPoint, {}});
      if (tag == "Polygon") return std::optional<FieldDef>(FieldDef{FieldType::kPolygon, {}});
      if (tag == "Pointer") {
        auto target = StringMember(o, "className");
        return std::optional<FieldDef>(FieldDef{FieldType::kPointer, std::string(target)});
      }
      return errors::SchemaMismatch(table, field, "a value of a known type", DescribeValue(value));
    }
  }
  return std::optional<FieldDef>();
}

Result<Cell> EncodeValue(const json::value& value, const FieldDef& def,
                                  std::string_view table, std::string_view field) {
  switch (def.type) {
    case FieldType::kString:
    case FieldType::kHtml:
      if (value.is_string()) return Cell(std::string(value.get_string()));
      if (value.is_number()) return Cell(NumberText(value));  // spec §2.2: coerced
      return Mismatch(table, field, def, value);
    case FieldType::kNumber:
      if (value.is_int64()) return Cell(value.get_int64());
      if (value.is_uint64()) return Cell(static_cast<double>(value.get_uint64()));
      if (value.is_double()) return Cell(value.get_double());
      return Mismatch(table, field, def, value);
    case FieldType::kBoolean:
      if (value.is_bool()) return Cell(std::int64_t{value.get_bool() ? 1 : 0});
      return Mismatch(table, field, def, value);
    case FieldType::kDate: {
      if (!value.is_object() || TypeTag(value.get_object()) != "Date")
        return Mismatch(table, field, def, value);
      auto iso = timeutil::NormalizeIso(StringMember(value.get_object(), "iso"));
      if (!iso) return Mismatch(table, field, def, value);
      return Cell(std::move(*iso));
    }
    case FieldType::kPointer: {
      if (!value.is_object() || TypeTag(value.get_object()) != "Pointer")
        return Mismatch(table, field, def, value);
      const auto& o = value.get_object();
      if (StringMember(o, "className") != def.target_class) return Mismatch(table, field, def, value);
      auto id = StringMember(o, "objectId");
      if (!ids::IsAlnumId(id, kMaxPointerIdLength)) return Mismatch(table, field, def, value);
      return Cell(std::string(id));
    }
    case FieldType::kArray:
      if (!value.is_array()) return Mismatch(table, field, def, value);
      CRMD_TRY(CheckNestedKeys(value));
      return Cell(ToJson(value));
    case FieldType::kObject:
      if (!value.is_object() || !TypeTag(value.get_object()).empty())
        return Mismatch(table, field, def, value);
      CRMD_TRY(CheckNestedKeys(value));
      return Cell(ToJson(value));
    case FieldType::kFile:
    case FieldType::kPrivateFile: {
      if (!value.is_object() || TypeTag(value.get_object()) != "File")
        return Mismatch(table, field, def, value);
      const auto& o = value.get_object();
      auto name = StringMember(o, "name");
      if (name.empty()) return Mismatch(table, field, def, value);
      json::object file{{"__type", "File"}, {"name", name}};
      if (auto url = StringMember(o, "url"); !url.empty()) file["url"] = url;
      return Cell(ToJson(file));
    }
    case FieldType::kBytes: {
      if (!value.is_object() || TypeTag(value.get_object()) != "Bytes") return Mismatch(table, field, def, value);
      const auto* base64 = value.get_object().if_contains("base64");
      if (!base64 || !base64->is_string()) return Mismatch(table, field, def, value);
      return Cell(std::string(base64->get_string()));
    }
    case FieldType::kGeoPoint: {
      if (!value.is_object() || TypeTag(value.get_object()) != "GeoPoint") return Mismatch(table, field, def, value);
      CRMD_ASSIGN(auto point, ParseGeoPoint(value));
      return Cell(GeoPointJson(point));
    }
    case FieldType::kPolygon: {
      if (!value.is_object() || TypeTag(value.get_object()) != "Polygon") return Mismatch(table, field, def, value);
      CRMD_ASSIGN(auto ring, ParsePolygon(value));
      return Cell(PolygonJson(ring));
    }
    case FieldType::kRelation:
    case FieldType::kAcl:
      return Mismatch(table, field, def, value);
  }
  return Mismatch(table, field, def, value);
}

json::value DecodeCell(const Cell& cell, const FieldDef& def) {
  if (IsNull(cell)) return nullptr;
  switch (def.type) {
    case FieldType::kString:
    case FieldType::kHtml:
      if (const auto* s = std::get_if<std::string>(&cell)) return json::value(*s);
      break;
    case FieldType::kNumber:
      if (const auto* i = std::get_if<std::int64_t>(&cell)) return *i;
      if (const auto* d = std::get_if<double>(&cell)) return *d;
      break;
    case FieldType::kBoolean:
      if (const auto* i = std::get_if<std::int64_t>(&cell)) return *i != 0;
      break;
    case FieldType::kDate:
      if (const auto* s = std::get_if<std::string>(&cell))
        return json::object{{"__type", "Date"}, {"iso", *s}};
      break;
    case FieldType::kPointer:
      if (const auto* s = std::get_if<std::string>(&cell))
        return json::object{{"__type", "Pointer"}, {"className", def.target_class}, {"objectId", *s}};
      break;
    case FieldType::kArray:
    case FieldType::kObject:
    case FieldType::kFile:
    case FieldType::kPrivateFile:
    case FieldType::kAcl:
    case FieldType::kGeoPoint:
    case FieldType::kPolygon:
      if (const auto* s = std::get_if<std::string>(&cell)) {
        auto parsed = ParseJson(*s);
        if (parsed.ok()) return std::move(parsed).value();
      }
      break;
    case FieldType::kRelation:
      return json::object{{"__type", "Relation"}, {"className", def.target_class}};
    case FieldType::kBytes:
      if (const auto* s = std::get_if<std::string>(&cell)) return json::object{{"__type", "Bytes"}, {"base64", *s}};
      break;
  }
  // A cell of another SQL type than the field's: data written outside crmd. Show it as it is.
  return std::visit(
      [](const auto& v) -> json::value {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>) return nullptr;
        else return json::value(v);
      },
      cell);
}

Status CheckNestedKeys(const json::value& value) {
  if (value.is_array()) {
    for (const auto& item : value.get_array()) CRMD_TRY(CheckNestedKeys(item));
  } else if (value.is_object()) {
    for (const auto& kv : value.get_object()) {
      std::string_view key = kv.key();
      if (key.starts_with('$') || key.find('.') != std::string_view::npos)
        return errors::InvalidNestedKey();
      CRMD_TRY(CheckNestedKeys(kv.value()));
    }
  }
  return {};
}

}  // namespace crmd::schema
