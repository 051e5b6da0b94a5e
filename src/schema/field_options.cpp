#include "schema/field_options.hpp"

#include <fmt/format.h>

#include "schema/codec.hpp"
#include "util/errors.hpp"

namespace crmd::schema {

namespace json = boost::json;

namespace {

ApiError IncorrectType(std::string message) { return ApiError{400, errors::kIncorrectType, std::move(message)}; }

// Whether a value whose inferred type is `got` may be the default of a field of type `want`: the
// same type (Pointers to the same class), text for either text type, a File for either file type.
bool Fits(const FieldDef& want, const FieldDef& got) {
  if (IsStringLike(want.type)) return IsStringLike(got.type);
  if (want.type == FieldType::kPrivateFile) return got.type == FieldType::kFile;
  return want == got;
}

}  // namespace

Result<FieldOptions> ParseFieldOptions(const json::object& spec, const FieldDef& def, std::string_view class_name,
                                       std::string_view field) {
  FieldOptions out;
  if (const auto* required = spec.if_contains("required"); required && !required->is_null()) {
    if (!required->is_bool())
      return IncorrectType(fmt::format("required of {}.{} must be a boolean", class_name, field));
    out.required = required->get_bool();
  }
  if (const auto* value = spec.if_contains("defaultValue"); value && !value->is_null()) {
    if (def.type == FieldType::kRelation)
      return IncorrectType(fmt::format("The 'default value' option is not applicable for {}", def.Describe()));
    CRMD_ASSIGN(auto got, InferFieldType(*value, class_name, field));
    if (!got || !Fits(def, *got))
      return IncorrectType(fmt::format("schema mismatch for {}.{} default value; expected {} but got {}", class_name,
                                       field, def.Describe(), DescribeValue(*value)));
    CRMD_TRY(EncodeValue(*value, def, class_name, field));  // a Date's iso, nested keys: storable
    out.default_value = json::value(*value, json::storage_ptr());
  }
  if (out.required && def.type == FieldType::kRelation)
    return IncorrectType(fmt::format("The 'required' option is not applicable for {}", def.Describe()));
  return out;
}

void WriteFieldOptions(const FieldOptions& options, json::object& spec) {
  if (options.required) spec["required"] = true;
  if (options.default_value) spec["defaultValue"] = *options.default_value;
}

}  // namespace crmd::schema
