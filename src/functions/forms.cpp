#include "functions/forms.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "app/write_unit.hpp"
#include "functions/config_flags.hpp"
#include "schema/names.hpp"
#include "util/errors.hpp"
#include "util/ids.hpp"
#include "util/time.hpp"
#include "write/field_changes.hpp"
#include "write/phone_keys.hpp"
#include "write/record_writer.hpp"

namespace crmd::functions {

namespace json = boost::json;

namespace {

constexpr std::string_view kAccounts = "Accounts";
constexpr std::string_view kLeadStatuses = "LeadStatuses";
constexpr std::string_view kDuplicateStatus = "Duplicate";

ApiError FormError(int status, std::string message) { return ApiError{status, 0, std::move(message), ErrorBody::kErrorOnly}; }
ApiError Disabled(std::string_view flag) { return FormError(400, fmt::format("{} is Disabled", flag)); }

// Whether `v` is or holds a File value, at any depth (the parser bounds the depth).
bool HasFile(const json::value& v) {
  if (const auto* a = v.if_array()) {
    for (const auto& item : *a)
      if (HasFile(item)) return true;
    return false;
  }
  const auto* o = v.if_object();
  if (!o) return false;
  if (const auto* type = o->if_contains("__type"); type && type->is_string() && type->get_string() == "File") return true;
  for (const auto& kv : *o)
    if (HasFile(kv.value())) return true;
  return false;
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
    if (HasFile(kv.value())) return FormError(400, "Form functions do not accept files.");
    if (!schema::IsValidFieldName(key) && LooksHostile(key)) return FormError(400, fmt::format("Invalid field name: {}.", key));
    if (!key.starts_with(prefix)) continue;
    const std::string_view name = key.substr(prefix.size());
    const auto* field = cls.FindField(name);
    if (!field || schema::IsBuiltinField(name)) continue;
    CRMD_ASSIGN(auto value, FormValue(*field, key, kv.value(), wrapped_pointers));
    if (value) out[name] = std::move(*value);
  }
  return out;
}

// The `Duplicate` lead status, when the application has one.
std::optional<std::string> DuplicateStatus(storage::WriteTransaction& db, const schema::Snapshot& snapshot) {
  const auto* statuses = snapshot.Find(kLeadStatuses);
  if (!statuses || !statuses->FindField("Name")) return std::nullopt;
  auto row = storage::FindFirst(db, *statuses, "Name", std::string(kDuplicateStatus));
  if (!row) return std::nullopt;
  return row->object_id;
}

// The unit the form runs in (RunForm begins it): its lookups see its own writes.
storage::WriteTransaction& TxnOf(auth::Context& ctx) { return ctx.unit->txn(); }

json::object PointerTo(std::string_view cls, std::string_view id) {
  return json::object{{"__type", "Pointer"}, {"className", cls}, {"objectId", id}};
}

// Spec §4.9 getlead: a new lead in Accounts on every call; one whose phone (in any form) or Email
// matches an existing Account is still created, pointing at the `Duplicate` lead status.
Result<json::object> GetLead(auth::Context& ctx, const json::object& body) {
  if (!ConfigFlag(*ctx.app, "AcceptWebLeads")) return Disabled("AcceptWebLeads");
  auto snapshot = ctx.app->schema();
  const auto* accounts = snapshot->Find(kAccounts);
  if (!accounts) return FormError(400, "Accounts does not exist");
  CRMD_ASSIGN(auto fields, FormFields(*accounts, body, "", /*wrapped_pointers=*/true));
  auto& txn = TxnOf(ctx);
  bool duplicate = false;
  if (const auto* phone = fields.if_contains("PhoneNumber"); phone && phone->is_string())
    duplicate = !write::ContactsByPhone(txn, *snapshot, phone->get_string(), ctx.app->phone_region(), 1).empty();
  if (const auto* email = fields.if_contains("Email"); !duplicate && email && email->is_string() && !email->get_string().empty())
    duplicate = storage::FindFirst(txn, *accounts, "Email", std::string(email->get_string())).has_value();
  if (duplicate && accounts->FindField("LeadStatusId")) {
    if (auto status = DuplicateStatus(txn, *snapshot)) fields["LeadStatusId"] = PointerTo(kLeadStatuses, *status);
  }
  CRMD_ASSIGN(auto created, write::CreateRecord(ctx, kAccounts, fields));
  return json::object{{"success", true}, {"accountId", created["objectId"]}};
}

// Spec §4.9: a form runs with master rights, so table permissions do not stop it. What does
// (issue 31 #6): never `Config`, whose rows are the forms' own gates (an anonymous web2table to it
// switched another form on); never a system or log class (their names start with `_`, which
// IsValidUserClassName refuses); and where the operator narrowed web2table (`crmd app set
// --web2table-classes`), only the classes listed. The forms' fixed tables (Accounts, Cases, Sales)
// are theirs by the spec.
bool OpenToWebToTable(const auth::Context& ctx, std::string_view table) {
  if (table == "Config") return false;
  if (!ctx.credentials) return true;
  const auto& listed = ctx.credentials->gates.web2table_classes;
  return listed.empty() || std::find(listed.begin(), listed.end(), table) != listed.end();
}

struct TableForm {
  std::string_view flag;
  std::string_view table;  // empty: the body's `table`
  bool sale = false;       // web2sale's extra fields
};

std::optional<std::string_view> StringKey(const json::object& body, std::string_view key) {
  const auto* v = body.if_contains(key);
  if (!v || !v->is_string() || v->get_string().empty()) return std::nullopt;
  return std::string_view(v->get_string());
}

// Spec §4.9 web2table (and web2case, web2sale with the table fixed): the contact is found by
// phone among Accounts or created with the `account_<Field>` values, never updated; a new row in
// the table carries `Name`, the `table_<Field>` values and a Pointer to the contact in AccountId.
Result<json::object> WebToTable(auth::Context& ctx, const json::object& body, const TableForm& form) {
  if (!ConfigFlag(*ctx.app, form.flag)) return Disabled(form.flag);
  std::string_view table = form.table;
  if (table.empty()) {
    auto named = StringKey(body, "table");
    if (!named) return FormError(400, "missing \"table\" in request body");
    table = *named;
  }
  auto phone = StringKey(body, "phone");
  if (!phone) return FormError(400, "missing \"phone\"");
  auto snapshot = ctx.app->schema();
  const auto* accounts = snapshot->Find(kAccounts);
  const auto* target = snapshot->Find(table);
  // A public form writes to tables that exist, and never to a system table.
  if (!schema::IsValidUserClassName(table) || !target) return FormError(400, fmt::format("table {} does not exist", table));
  if (form.table.empty() && !OpenToWebToTable(ctx, table)) return FormError(400, fmt::format("table {} is not open to web forms", table));
  if (!accounts) return FormError(400, "Accounts does not exist");
  CRMD_ASSIGN(auto row, FormFields(*target, body, "table_", /*wrapped_pointers=*/false));
  CRMD_ASSIGN(auto contact_fields, FormFields(*accounts, body, "account_", /*wrapped_pointers=*/true));

  auto& txn = TxnOf(ctx);
  const std::string region = ctx.app->phone_region();
  auto found = write::ContactsByPhone(txn, *snapshot, *phone, region, 1);
  const bool new_contact = found.empty();
  std::string contact_id;
  if (new_contact) {
    // account_PhoneNumber fills the field; the phone that found no one is the field otherwise.
    if (!contact_fields.contains("PhoneNumber")) contact_fields["PhoneNumber"] = *phone;
    CRMD_ASSIGN(auto created, write::CreateRecord(ctx, kAccounts, contact_fields));
    contact_id = std::string(created["objectId"].as_string());
  } else {
    contact_id = found.front();
  }

  if (auto name = body.if_contains("Name"); name && name->is_string()) row["Name"] = *name;
  row["AccountId"] = PointerTo(kAccounts, contact_id);
  if (form.sale) {
    schema::Query earlier;
    earlier.where = schema::FieldEquals("AccountId", contact_id);
    earlier.limit = 1;
    bool had_sale = false;
    if (target->FindField("AccountId")) txn.Find(*target, earlier, [&](storage::Row&) { return had_sale = true, false; });
    row["IsFirst"] = !had_sale;
    row["AccountNotExist"] = new_contact;
    for (std::string_view key : {"CampaignName", "PageName"})
      if (auto v = StringKey(body, key)) row[key] = *v;
    row["PhoneNumber"] = *phone;
    if (auto email = StringKey(body, "email")) row["Email"] = *email;
    else if (auto account_email = StringKey(body, "account_Email")) row["Email"] = *account_email;
  }
  CRMD_ASSIGN(auto created, write::CreateRecord(ctx, table, row));
  return json::object{{"success", true}, {"accountId", contact_id}, {"Id", created["objectId"]}};
}

// A record-API error as a form answers it: its status, `{"error": message}`.
ApiError AsFormError(ApiError e) {
  e.body = ErrorBody::kErrorOnly;
  return e;
}

}  // namespace

bool IsForm(std::string_view name) {
  return name == "getlead" || name == "web2table" || name == "web2case" || name == "web2sale";
}

std::optional<Result<json::object>> RunForm(auth::Context& ctx, std::string_view name, const json::object& body) {
  using Form = Result<json::object> (*)(auth::Context&, const json::object&);
  Form form = nullptr;
  if (name == "getlead") form = GetLead;
  if (name == "web2table")
    form = [](auth::Context& c, const json::object& b) { return WebToTable(c, b, {"AcceptWebToTable", ""}); };
  if (name == "web2case")
    form = [](auth::Context& c, const json::object& b) { return WebToTable(c, b, {"AcceptWebToCaseLeads", "Cases"}); };
  if (name == "web2sale")
    form = [](auth::Context& c, const json::object& b) { return WebToTable(c, b, {"AcceptWebToSaleLeads", "Sales", true}); };
  if (!form) return std::nullopt;
  if (body.size() > write::kMaxBodyKeys) return Result<json::object>(AsFormError(errors::TooManyKeys(write::kMaxBodyKeys)));
  ctx.identity = auth::Identity::System();
  ctx.referer = fmt::format("server-side-code:{}", name);
  // Accounts may have gained PhoneNumber since the store opened: its index is made first, by a call
  // on the write queue once the queue's group let go of the store.
  if (!ctx.app->PhoneIndexCheckedFor(ctx.app->schema())) {
    app::BeforeSlowWork(ctx);
    write::EnsurePhoneIndex(*ctx.app);
  }
  // One call, one unit: a failing call leaves nothing behind.
  auto answer = app::RunWrite(ctx, [&](app::WriteUnit&) { return form(ctx, body); });
  if (!answer.ok()) return Result<json::object>(AsFormError(std::move(answer).error()));
  return answer;
}

}  // namespace crmd::functions
