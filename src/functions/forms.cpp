#include "functions/forms.hpp"

#include <fmt/format.h>

#include <cctype>

#include "app/write_unit.hpp"
#include "functions/config_flags.hpp"
#include "schema/names.hpp"
#include "util/errors.hpp"
#include "util/ids.hpp"
#include "util/time.hpp"
#include "write/field_changes.hpp"
#include "write/record_writer.hpp"

namespace crmd::functions {

namespace json = boost::json;

namespace {

constexpr std::string_view kAccounts = "Accounts";
constexpr std::string_view kLeadStatuses = "LeadStatuses";
constexpr std::string_view kDuplicateStatus = "Duplicate";

ApiError FormError(int status, std::string message) { return ApiError{status, 0, std::move(message), ErrorBody::kErrorOnly}; }
ApiError Disabled(std::string_view flag) { return FormError(400, fmt::format("{} is Disabled", flag)); }

bool IsFile(const json::value& v) {
  if (!v.is_object()) return false;
  const auto* type = v.get_object().if_contains("__type");
  return type && type->is_string() && type->get_string() == "File";
}

// A value of `field` as the forms take it (spec §4.9 "Form function behaviours"), or nullopt to
// leave the key out. `wrapped_pointers`: whether a Pointer may come as {"__type":"Pointer",...}
// (in `account_*` keys and getlead; in `table_*` keys only a bare id counts).
Result<std::optional<json::value>> FormValue(const schema::FieldDef& field, std::string_view key, const json::value& v,
                                             bool wrapped_pointers) {
  if (field.type == schema::FieldType::kPointer) {
    std::string_view id;
    if (v.is_string()) {
      id = v.get_string();
    } else if (v.is_object() && wrapped_pointers) {
      const auto* oid = v.get_object().if_contains("objectId");
      if (!oid || !oid->is_string()) return FormError(400, fmt::format("invalid pointer for {}", key));
      id = oid->get_string();
    } else {
      if (wrapped_pointers) return FormError(400, fmt::format("invalid pointer for {}", key));
      return std::optional<json::value>();
    }
    if (id.size() != 10 || !ids::IsAlnumId(id, 10)) {
      if (wrapped_pointers) return FormError(400, fmt::format("invalid pointer for {}: an objectId has 10 characters", key));
      return std::optional<json::value>();  // table_*: dropped silently
    }
    return std::optional<json::value>(json::object{{"__type", "Pointer"}, {"className", field.target_class}, {"objectId", id}});
  }
  if (field.type == schema::FieldType::kDate && v.is_string()) {
    // A flat ISO string or `YYYY-MM-DD`; the record API takes a Date object.
    auto iso = timeutil::NormalizeIso(v.get_string());
    if (!iso) return FormError(400, fmt::format("invalid date for {}", key));
    return std::optional<json::value>(json::object{{"__type", "Date"}, {"iso", *iso}});
  }
  return std::optional<json::value>(v);
}

// A key no form field could have: `__proto__`, `$where`, quotes and other SQL. Refused, where a
// key of a landing page's own (`utm_source`, `first-name`) is ignored like any key the schema lacks.
bool LooksHostile(std::string_view name) {
  if (name.empty() || name[0] == '_' || name[0] == '$') return true;
  for (const char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' || c == ' ')) return true;
  return false;
}

// The fields of `cls` named by `body`'s keys (after `prefix`), as the forms take them: keys not in
// the schema are ignored, a key that is no field name at all is refused, a File fails the call.
Result<json::object> FormFields(const schema::ClassSchema& cls, const json::object& body, std::string_view prefix,
                                bool wrapped_pointers) {
  json::object out;
  for (const auto& kv : body) {
    const std::string_view key = kv.key();
    if (IsFile(kv.value())) return FormError(400, "Form functions do not accept files.");
    if (!key.starts_with(prefix)) continue;
    const std::string_view name = key.substr(prefix.size());
    if (!schema::IsValidFieldName(name) && LooksHostile(name)) return FormError(400, fmt::format("Invalid field name: {}.", key));
    const auto* field = cls.FindField(name);
    if (!field || schema::IsBuiltinField(name)) continue;
    CRMD_ASSIGN(auto value, FormValue(*field, key, kv.value(), wrapped_pointers));
    if (value) out[name] = std::move(*value);
  }
  return out;
}

// The `Duplicate` lead status, when the application has one.
std::optional<std::string> DuplicateStatus(storage::Database& db, const schema::Snapshot& snapshot) {
  const auto* statuses = snapshot.Find(kLeadStatuses);
  if (!statuses || !statuses->FindField("Name")) return std::nullopt;
  auto row = storage::FindFirst(db, *statuses, "Name", std::string(kDuplicateStatus));
  if (!row) return std::nullopt;
  return row->object_id;
}

// Spec §4.9 getlead: a new lead in Accounts on every call; one whose Email matches an existing
// Account is still created, pointing at the `Duplicate` lead status.
Result<json::object> GetLead(auth::Context& ctx, const json::object& body) {
  if (!ConfigFlag(*ctx.app, "AcceptWebLeads")) return Disabled("AcceptWebLeads");
  auto snapshot = ctx.app->schema();
  const auto* accounts = snapshot->Find(kAccounts);
  if (!accounts) return FormError(400, "Accounts does not exist");
  CRMD_ASSIGN(auto fields, FormFields(*accounts, body, "", /*wrapped_pointers=*/true));
  bool duplicate = false;
  if (const auto* email = fields.if_contains("Email"); email && email->is_string() && !email->get_string().empty())
    duplicate = storage::FindFirst(ctx.app->db(), *accounts, "Email", std::string(email->get_string())).has_value();
  if (duplicate && accounts->FindField("LeadStatusId")) {
    if (auto status = DuplicateStatus(ctx.app->db(), *snapshot))
      fields["LeadStatusId"] = json::object{{"__type", "Pointer"}, {"className", kLeadStatuses}, {"objectId", *status}};
  }
  CRMD_ASSIGN(auto created, write::CreateRecord(ctx, kAccounts, fields));
  return json::object{{"success", true}, {"accountId", created["objectId"]}};
}

// A record-API error as a form answers it: its status, `{"error": message}`.
ApiError AsFormError(ApiError e) {
  e.body = ErrorBody::kErrorOnly;
  return e;
}

}  // namespace

std::optional<Result<json::object>> RunForm(auth::Context& ctx, std::string_view name, const json::object& body) {
  using Form = Result<json::object> (*)(auth::Context&, const json::object&);
  Form form = nullptr;
  if (name == "getlead") form = GetLead;
  if (!form) return std::nullopt;
  if (body.size() > write::kMaxBodyKeys) return Result<json::object>(AsFormError(errors::TooManyKeys(write::kMaxBodyKeys)));
  ctx.identity = auth::Identity::System();
  ctx.referer = fmt::format("server-side-code:{}", name);
  // One call, one unit: a failing call leaves nothing behind.
  auto answer = app::RunWrite(ctx, [&](app::WriteUnit&) { return form(ctx, body); });
  if (!answer.ok()) return Result<json::object>(AsFormError(std::move(answer).error()));
  return answer;
}

}  // namespace crmd::functions
