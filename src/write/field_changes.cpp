#include "write/field_changes.hpp"

#include "auth/acl.hpp"
#include "schema/codec.hpp"
#include "schema/geo_value.hpp"
#include "schema/names.hpp"
#include "schema/system_classes.hpp"
#include "storage/row.hpp"
#include "util/errors.hpp"
#include "util/ids.hpp"
#include "write/operators.hpp"
#include "write/required_fields.hpp"

namespace crmd::write {

namespace json = boost::json;

namespace {

// Longest client-supplied objectId (master key only). The spec allows "any length"; this bound
// keeps ids usable as ACL principals and index keys.
constexpr std::size_t kMaxCustomObjectIdLength = 64;

bool IsDateObject(const json::value& v) {
  if (!v.is_object()) return false;
  const auto* t = v.get_object().if_contains("__type");
  return t && t->is_string() && t->get_string() == "Date";
}

// A new field may not differ only in case from a declared or builtin one: SQL folds the case of
// column names, so the two could not both be stored.
Status CheckNewFieldName(const schema::ClassSchema& cls, const std::string& field) {
  for (const char* builtin : {"objectId", "createdAt", "updatedAt"})
    if (schema::EqualsIgnoringCase(field, builtin)) return errors::FieldNameCaseCollision(field, builtin);
  for (const auto& [name, def] : cls.fields)
    if (schema::EqualsIgnoringCase(field, name)) return errors::FieldNameCaseCollision(field, name);
  return {};
}

// Whether `key` may be one of the keys handled before the fields (objectId, createdAt, updatedAt,
// ACL, createdBy, updatedBy, a user's password and authData): one look at the first character spares most
// fields the comparisons with each.
bool MaybeServerKey(std::string_view key) {
  if (key.empty()) return false;
  switch (key.front()) {
    case 'o': case 'c': case 'u': case 'A': case 'a': case 'p': case '_': return true;
    default: return false;
  }
}

}  // namespace

CurrentValues::CurrentValues(const schema::ClassSchema& cls, const storage::Row& row) : cls_(&cls), row_(&row) {}

json::value CurrentValues::Get(std::string_view field, const schema::FieldDef& def) const {
  if (!row_) return nullptr;
  return schema::DecodeCell(storage::CellOf(*cls_, *row_, field), def);
}

Result<FieldChanges> CollectChanges(const json::object& body, const schema::ClassSchema& base,
                                    std::optional<schema::ClassSchema>& grown, const auth::Identity& identity,
                                    WriteKind kind, std::string_view object_id, const CurrentValues& current,
                                    const Status& may_add_fields) {
  if (body.size() > kMaxBodyKeys) return errors::TooManyKeys(kMaxBodyKeys);
  if (!base.field_options.empty()) CRMD_TRY(CheckRequired(body, base, kind));
  FieldChanges out;
  out.columns.reserve(body.size() + 2);  // + the writer fields SetWriter may add
  out.cells.reserve(body.size() + 2);
  grown.reset();
  // Adds a field the body introduces, to a copy of the class made the first time.
  auto add_field = [&](const std::string& name, schema::FieldDef def) -> Status {
    if (!may_add_fields.ok()) return may_add_fields;
    if ((grown ? grown->fields.size() : base.fields.size()) >= schema::kMaxFieldsPerClass) return errors::TooManyFields(schema::kMaxFieldsPerClass);
    CRMD_TRY(schema::CheckOneGeoPoint(grown ? *grown : base, name, def.type));
    if (!grown) grown = base;
    grown->fields.emplace_back(name, std::move(def));
    out.schema_changed = true;
    return {};
  };
  std::size_t next_field = 0;  // where the next key is looked for first (FindField)
  for (const auto& kv : body) {
    const schema::ClassSchema& cls = grown ? *grown : base;  // with the fields added so far
    std::string key(kv.key());
    const json::value& value = kv.value();

    if (MaybeServerKey(key)) {
      if (key == "objectId") {
        if (kind == WriteKind::kUpdate && value.is_string() && value.get_string() == object_id) continue;
        if (kind == WriteKind::kUpdate || !identity.IsMaster())
          return errors::ObjectIdNotWritable();
        if (!value.is_string() || !ids::IsAlnumId(value.get_string(), kMaxCustomObjectIdLength))
          return errors::InvalidObjectId(value.is_string() ? std::string(value.get_string())
                                                           : json::serialize(value));
        out.object_id = std::string(value.get_string());
        continue;
      }
      if (key == "createdAt" || key == "updatedAt") {
        if (IsDateObject(value)) continue;  // server-owned; a well-formed value is ignored (Parse)
        return errors::SchemaMismatch(cls.name, key, "Date", schema::DescribeValue(value));
      }
      if (key == "ACL") {
        if (value.is_null()) {
          out.acl.emplace(std::nullopt);
          continue;
        }
        CRMD_ASSIGN(auto acl, auth::NormalizeAcl(value));
        out.acl.emplace(std::move(acl));
        continue;
      }
      if (key == "createdBy" || key == "updatedBy") continue;  // server-owned (COMPATIBILITY.md)
      if (cls.name == "_User" && (key == "password" || key == schema::kHashedPassword)) continue;  // user_rules
      // Parse's anonymous sign-in data is a credential, kept hashed (write/anonymous_auth).
      if (cls.name == "_User" && key == "authData" && identity.gates.anonymous_users) continue;
    }
    // Declared or not: the system classes declare fields (_perishable_token, ...) no body may write.
    if (!schema::IsValidFieldName(key)) return errors::InvalidFieldName(key);
    // A session token is the server's to issue, never a value a body stores (SECURITY.md).
    if (key == "sessionToken" && (cls.name == "_User" || cls.name == "_Session")) return errors::InvalidFieldName(key);

    const schema::FieldDef* def = cls.FindField(key, next_field);
    // The value to store: the body's own, or an operator's result (kept in `applied`).
    const json::value* effective = &value;
    json::value applied;
    // A relation operation: rows of the join table to add or remove, the field made if new.
    auto change_relation = [&](Operator& op) -> Status {
      if (op.relation_ids.empty()) return {};
      const schema::ClassSchema& now = grown ? *grown : base;
      const schema::FieldDef wanted{schema::FieldType::kRelation, op.relation_class};
      if (const auto* declared = now.FindField(key)) {
        if (!(*declared == wanted))
          return errors::SchemaMismatch(now.name, key, declared->Describe(), wanted.Describe());
      } else {
        if (!schema::IsValidUserClassName(op.relation_class) && !schema::IsSystemClassName(op.relation_class))
          return errors::InvalidClassName(op.relation_class);
        CRMD_TRY(CheckNewFieldName(now, key));
        CRMD_TRY(add_field(key, wanted));
      }
      out.relations.push_back({key, op.kind == OperatorKind::kAddRelation, std::move(op.relation_ids)});
      return {};
    };
    if (IsOperator(value) && IsBatch(value.get_object())) {
      CRMD_ASSIGN(auto ops, ParseRelationBatch(value.get_object()));
      for (auto& op : ops) CRMD_TRY(change_relation(op));
      continue;
    }
    if (IsOperator(value)) {
      CRMD_ASSIGN(auto op, ParseOperator(value.get_object()));
      if (IsRelationOperator(op)) {
        CRMD_TRY(change_relation(op));
        continue;
      }
      if (!def) {
        auto created = TypeCreatedBy(op);
        if (!created) continue;  // Delete of a field that does not exist
        CRMD_TRY(CheckNewFieldName(cls, key));
        CRMD_TRY(add_field(key, *created));
        def = grown->FindField(key);
      }
      CRMD_ASSIGN(auto result, ApplyOperator(op, current.Get(key, *def), *def, cls.name, key));
      if (!result) {
        out.Set(std::move(key), std::monostate{});
        continue;
      }
      if (EchoesResult(op)) out.echoed[key] = *result;
      applied = std::move(*result);
      effective = &applied;
    }

    if (def && def->type == schema::FieldType::kRelation)
      return errors::SchemaMismatch(cls.name, key, def->Describe(), schema::DescribeValue(*effective));
    if (effective->is_null()) {
      if (!def) continue;  // a new field first written with null is not created (Parse)
      out.SetNull(std::move(key));
      continue;
    }
    if (!def) {
      CRMD_ASSIGN(auto inferred, schema::InferFieldType(*effective, cls.name, key));
      if (!inferred) continue;
      // Parse's Bytes is a type of the parseNames gate alone (issue 36); elsewhere an unknown type.
      if (inferred->type == schema::FieldType::kBytes && !identity.gates.parse_names)
        return errors::SchemaMismatch(cls.name, key, "a value of a known type", "Bytes");
      if (inferred->type == schema::FieldType::kPointer &&
          !schema::IsValidUserClassName(inferred->target_class) &&
          !schema::IsSystemClassName(inferred->target_class))
        return errors::InvalidClassName(inferred->target_class);
      CRMD_TRY(CheckNewFieldName(cls, key));
      CRMD_TRY(add_field(key, *inferred));
      def = grown->FindField(key);
    }
    CRMD_ASSIGN(auto cell, schema::EncodeValue(*effective, *def, cls.name, key));
    out.Set(std::move(key), std::move(cell));
  }
  return out;
}

}  // namespace crmd::write
