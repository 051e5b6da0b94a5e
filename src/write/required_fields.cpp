#include "write/required_fields.hpp"

#include "util/errors.hpp"

namespace crmd::write {

namespace json = boost::json;

namespace {

constexpr int kValidationError = 142;

bool IsDelete(const json::value& v) {
  const auto* op = v.is_object() ? v.get_object().if_contains("__op") : nullptr;
  return op && op->is_string() && op->get_string() == "Delete";
}

// Parse counts null and "" as no value for a required field, besides absence and Delete.
bool IsEmpty(const json::value* v) {
  return !v || v->is_null() || (v->is_string() && v->get_string().empty()) || IsDelete(*v);
}

}  // namespace

std::optional<json::object> WithDefaults(const json::object& body, const schema::ClassSchema& cls) {
  std::optional<json::object> out;
  for (const auto& [field, options] : cls.field_options) {
    if (!options.default_value) continue;
    const auto* given = body.if_contains(field);
    if (given && !IsDelete(*given)) continue;
    if (!out) out.emplace(body, json::storage_ptr());
    (*out)[field] = *options.default_value;
  }
  return out;
}

Status CheckRequired(const json::object& body, const schema::ClassSchema& cls, WriteKind kind) {
  for (const auto& [field, options] : cls.field_options) {
    if (!options.required) continue;
    const auto* given = body.if_contains(field);
    if (kind == WriteKind::kUpdate && !given) continue;  // left as it is
    if (IsEmpty(given)) return ApiError{400, kValidationError, field + " is required"};
  }
  return {};
}

}  // namespace crmd::write
