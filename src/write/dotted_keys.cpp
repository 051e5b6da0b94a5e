#include "write/dotted_keys.hpp"

#include <fmt/format.h>

#include "schema/names.hpp"
#include "util/errors.hpp"
#include "util/strings.hpp"
#include "write/operators.hpp"

namespace crmd::write {

namespace json = boost::json;

namespace {

std::string_view FieldOf(std::string_view key) { return key.substr(0, key.find('.')); }

// The type a builtin field has in the schema object (spec §2.5).
std::string_view BuiltinTypeName(std::string_view field) {
  if (field == "ACL") return "ACL";
  if (field == "createdAt" || field == "updatedAt") return "Date";
  if (field == "createdBy" || field == "updatedBy") return "Pointer";
  return "String";  // objectId
}

ApiError NotAnObject(std::string_view key) {
  return ApiError{400, errors::kIncorrectType, fmt::format("{} reaches inside a value that is no object.", key)};
}

// Applies one dotted key's value at `path` inside `root`.
Status Apply(json::object& root, std::string_view key, const std::vector<std::string_view>& path,
             const json::value& value) {
  json::object* at = &root;
  for (std::size_t i = 0; i + 1 < path.size(); ++i) {
    json::value& next = (*at)[path[i]];
    if (next.is_null()) next = json::object{};
    if (!next.is_object()) return NotAnObject(key);
    at = &next.get_object();
  }
  const std::string_view leaf = path.back();
  if (!IsOperator(value)) {
    (*at)[leaf] = value;
    return {};
  }
  CRMD_ASSIGN(auto op, ParseOperator(value.get_object()));
  switch (op.kind) {
    case OperatorKind::kDelete: at->erase(leaf); return {};
    case OperatorKind::kIncrement: {
      const json::value* stored = at->if_contains(leaf);
      if (stored && !stored->is_null() && !stored->is_number()) return NotAnObject(key);
      const double base = stored && stored->is_number() ? stored->to_number<double>() : 0.0;
      const double sum = base + op.argument.to_number<double>();
      // Whole numbers stay integers, as a stored count should read back.
      if (sum == static_cast<double>(static_cast<std::int64_t>(sum)) && op.argument.is_int64() &&
          (!stored || stored->is_null() || stored->is_int64()))
        (*at)[leaf] = static_cast<std::int64_t>(sum);
      else
        (*at)[leaf] = sum;
      return {};
    }
    default: return errors::UnsupportedOperator(value.get_object().at("__op").as_string());
  }
}

}  // namespace

bool HasDottedKeys(const json::object& body) {
  for (const auto& kv : body)
    if (kv.key().find('.') != std::string_view::npos) return true;
  return false;
}

void AddDottedFields(const json::object& body, std::vector<std::string_view>& fields) {
  for (const auto& kv : body)
    if (kv.key().find('.') != std::string_view::npos) fields.push_back(FieldOf(kv.key()));
}

Result<json::object> FoldDottedKeys(const json::object& body, const schema::ClassSchema& cls,
                                    const CurrentValues& current) {
  json::object folded;
  json::object roots;  // field -> its new whole value
  for (const auto& kv : body) {
    const std::string_view key = kv.key();
    if (key.find('.') == std::string_view::npos) {
      folded[key] = kv.value();
      continue;
    }
    const std::string_view field = FieldOf(key);
    std::vector<std::string_view> path = Split(key.substr(field.size() + 1), '.');
    for (auto part : path)
      if (part.empty() || field.empty()) return errors::InvalidFieldName(key);
    // The builtin fields (ACL, objectId, the dates and writers) are no Object, declared or not:
    // a key inside one would write it whole past its own rules (issue 31 #17).
    if (schema::IsBuiltinField(field)) return errors::SchemaMismatch(cls.name, field, BuiltinTypeName(field), "Object");
    const schema::FieldDef* def = cls.FindField(field);
    if (def && def->type != schema::FieldType::kObject)
      return errors::SchemaMismatch(cls.name, field, schema::TypeName(def->type), "Object");
    json::value& root = roots[field];
    if (root.is_null()) {
      // The field as the body sets it whole, else as stored.
      if (const auto* whole = body.if_contains(field); whole && !IsOperator(*whole)) root = *whole;
      else if (def) root = current.Get(field, *def);
      if (root.is_null()) root = json::object{};
      if (!root.is_object()) return NotAnObject(key);
    }
    CRMD_TRY(Apply(root.get_object(), key, path, kv.value()));
  }
  for (auto& kv : roots) folded[kv.key()] = std::move(kv.value());
  return folded;
}

json::object DottedIncrementResults(const json::object& sent, const json::object& folded) {
  json::object out;
  for (const auto& kv : sent) {
    const std::string_view key = kv.key();
    if (key.find('.') == std::string_view::npos || !IsOperator(kv.value())) continue;
    const auto* op = kv.value().get_object().if_contains("__op");
    if (!op || !op->is_string() || op->get_string() != "Increment") continue;
    const std::string_view field = FieldOf(key);
    const std::vector<std::string_view> path = Split(key.substr(field.size() + 1), '.');
    const json::value* result = folded.if_contains(field);
    json::value* answer = &out[field];
    for (auto part : path) {
      result = result && result->is_object() ? result->get_object().if_contains(part) : nullptr;
      if (!answer->is_object()) *answer = json::object{};
      answer = &answer->get_object()[part];
    }
    if (result) *answer = *result;
  }
  return out;
}

}  // namespace crmd::write
