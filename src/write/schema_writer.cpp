#include "write/schema_writer.hpp"

#include <fmt/format.h>

#include "app/application.hpp"
#include "app/write_unit.hpp"
#include "logs/timeline.hpp"
#include "schema/geo_value.hpp"
#include "schema/log_classes.hpp"
#include "schema/names.hpp"
#include "schema/system_classes.hpp"
#include "storage/write_transaction.hpp"
#include "triggers/definition.hpp"
#include "util/ids.hpp"
#include "util/json.hpp"

#include <algorithm>
#include "util/errors.hpp"

namespace crmd::write {

namespace json = boost::json;

namespace {

// Indexes one class may declare: each is a B-tree (or the FTS5 table) updated on every write.
constexpr std::size_t kMaxIndexesPerClass = 64;

ApiError BadIndex(std::string message) { return ApiError{400, errors::kInvalidQuery, std::move(message)}; }

Status CheckIndexSpec(const schema::ClassSchema& cls, std::string_view name, const json::value& spec) {
  if (!spec.is_object() || spec.get_object().empty())
    return BadIndex(fmt::format("Index {} must map fields to 1, -1 or \"text\".", name));
  for (const auto& kv : spec.get_object()) {
    std::string_view field = kv.key();
    const bool builtin = field == "objectId" || field == "createdAt" || field == "updatedAt";
    const auto* def = cls.FindField(field);
    if (!builtin && (!def || def->type == schema::FieldType::kRelation))
      return BadIndex(fmt::format("Field {} does not exist, cannot add index.", field));
    const json::value& kind = kv.value();
    if (kind.is_string() && kind.get_string() == "text") {
      if (!def || !schema::IsStringLike(def->type))
        return BadIndex(fmt::format("Field {} is not a String, cannot add a text index.", field));
    } else if (!kind.is_number() || (kind.to_number<double>() != 1 && kind.to_number<double>() != -1)) {
      return BadIndex(fmt::format("Index {} must map fields to 1, -1 or \"text\".", name));
    }
  }
  return {};
}

ApiError BadPermissions(std::string message) { return ApiError{400, errors::kInvalidJson, std::move(message)}; }

bool IsPermissionPrincipal(std::string_view key) {
  if (key == "*" || key == "requiresAuthentication") return true;
  if (key.starts_with("role:")) return key.size() > 5 && key.size() <= 5 + schema::kMaxNameLength;
  return ids::IsAlnumId(key, 64);
}

// Merges a `classLevelPermissions` body into `clp` (operations not named keep their rules),
// refusing anything crmd would not know how to enforce (allowlist).
Status MergePermissions(const json::value& body, json::object& clp, const schema::ClassSchema& cls) {
  if (!body.is_object()) return BadPermissions("classLevelPermissions must be an object");
  for (const auto& op : body.get_object()) {
    const std::string_view name = op.key();
    if (name == "protectedFields") {
      // Not enforced yet: accepting a non-empty list would fail open (fields still readable and
      // queryable), so only the empty form is taken.
      if (!op.value().is_object()) return BadPermissions("protectedFields must be an object");
      for (const auto& entry : op.value().get_object())
        if (!entry.value().is_array() || !entry.value().get_array().empty())
          return BadPermissions("protectedFields is not supported yet; hide fields with roles and ACLs");
      clp[name] = op.value();
      continue;
    }
    static constexpr std::string_view kOperations[] = {"find", "count", "get", "create", "update", "delete", "addField"};
    if (std::find(std::begin(kOperations), std::end(kOperations), name) == std::end(kOperations))
      return BadPermissions(fmt::format("'{}' is not a valid operation for class level permissions", name));
    if (!op.value().is_object()) return BadPermissions(fmt::format("'{}' must map principals to true", name));
    for (const auto& entry : op.value().get_object()) {
      if (!IsPermissionPrincipal(entry.key()))
        return BadPermissions(fmt::format("'{}' is not a valid principal for class level permissions", entry.key()));
      if (!entry.value().is_bool() || !entry.value().get_bool())
        return BadPermissions(fmt::format("'{}' must map principals to true", name));
    }
    clp[name] = op.value();
  }
  return {};
}



ApiError SchemaError(int code, std::string message) { return ApiError{400, code, std::move(message)}; }
constexpr int kInvalidSchemaOperation = 255;

// Adds and deletes fields per Parse's `fields` body: `{"F": {"type": "...", "targetClass": "...",
// "required": true, "defaultValue": ...}}` adds, `{"F": {"__op": "Delete"}}` deletes.
Status ApplyFields(const json::value& body, schema::ClassSchema& cls, const auth::Gates& gates) {
  if (!body.is_object()) return SchemaError(errors::kInvalidJson, "fields must be an object");
  for (const auto& kv : body.get_object()) {
    const std::string name(kv.key());
    const json::value& spec = kv.value();
    const bool remove = spec.is_object() && spec.get_object().contains("__op");
    if (remove) {
      const auto* op = spec.get_object().if_contains("__op");
      if (!op->is_string() || op->get_string() != "Delete") return errors::UnsupportedOperator("__op");
      if (!cls.FindField(name) || schema::IsBuiltinField(name) || name.starts_with('_'))
        return SchemaError(kInvalidSchemaOperation, fmt::format("Field {} does not exist, cannot update.", name));
      std::erase_if(cls.fields, [&](const auto& f) { return f.first == name; });
      cls.field_options.erase(name);
      // Indexes that used the field go with it.
      for (auto it = cls.indexes.begin(); it != cls.indexes.end();) {
        if (it->value().is_object() && it->value().get_object().contains(name)) it = cls.indexes.erase(it);
        else ++it;
      }
      continue;
    }
    if (!schema::IsValidFieldName(name) || schema::IsBuiltinField(name))
      return SchemaError(errors::kInvalidKeyName, fmt::format("invalid field name: {}", name));
    if (cls.FindField(name))
      return SchemaError(kInvalidSchemaOperation, fmt::format("Field {} exists, cannot update.", name));
    for (const auto& [other, def] : cls.fields)
      if (schema::EqualsIgnoringCase(other, name)) return errors::FieldNameCaseCollision(name, other);
    const auto* type = spec.is_object() ? spec.get_object().if_contains("type") : nullptr;
    auto parsed = type && type->is_string() ? schema::ParseTypeName(type->get_string()) : std::nullopt;
    // Parse's Bytes is a type of the parseNames gate alone.
    if (!parsed || *parsed == schema::FieldType::kAcl || (*parsed == schema::FieldType::kBytes && !gates.parse_names))
      return SchemaError(errors::kIncorrectType,
                         fmt::format("invalid field type: {}", type && type->is_string() ? std::string(type->get_string()) : ToJson(spec)));
    schema::FieldDef def{*parsed, {}};
    if (def.type == schema::FieldType::kPointer || def.type == schema::FieldType::kRelation) {
      const auto* target = spec.get_object().if_contains("targetClass");
      if (!target || !target->is_string())
        return SchemaError(135, fmt::format("type {} needs a class name", schema::TypeName(def.type)));
      def.target_class = std::string(target->get_string());
      if (!schema::IsValidUserClassName(def.target_class) && !schema::IsSystemClassName(def.target_class))
        return errors::InvalidClassName(def.target_class);
    }
    CRMD_TRY(schema::CheckOneGeoPoint(cls, name, def.type));
    CRMD_ASSIGN(auto options, schema::ParseFieldOptions(spec.get_object(), def, cls.name, name));
    if (!options.empty()) cls.field_options.emplace(name, std::move(options));
    cls.fields.emplace_back(name, std::move(def));
    if (cls.fields.size() > schema::kMaxFieldsPerClass) return errors::TooManyFields(schema::kMaxFieldsPerClass);
  }
  return {};
}

// The permissions a class gets when none are given: a system class's own, else those a new class
// gets in the application (spec §2.5, the newClasses gate).
json::object DefaultPermissions(std::string_view class_name, const auth::Gates& gates) {
  for (auto& system : schema::SystemClasses())
    if (system.name == class_name) return system.class_level_permissions;
  if (class_name.starts_with('_')) return json::object{};  // keys only, as COMPATIBILITY.md says
  return schema::ClassSchema::NewImplicit(std::string(class_name), !gates.closed_new_classes).class_level_permissions;
}

// Applies a Parse schema body (`className`, `fields`, `classLevelPermissions`, `indexes`) to
// `cls`. Everything is checked before anything is stored, so a refused body changes nothing.
Status ApplyBody(const json::object& body, std::string_view class_name, schema::ClassSchema& cls,
                 const auth::Gates& gates) {
  for (const auto& kv : body) {
    if (kv.key() == "className") {
      if (!kv.value().is_string() || kv.value().get_string() != class_name)
        return ApiError{400, errors::kInvalidClassName,
                        fmt::format("Class name mismatch between {} and {}.",
                                    kv.value().is_string() ? std::string(kv.value().get_string()) : ToJson(kv.value()),
                                    class_name)};
    } else if (kv.key() == "fields") {
      CRMD_TRY(ApplyFields(kv.value(), cls, gates));
    } else if (kv.key() == "classLevelPermissions") {
      // Parse's null: the permissions the class would have had without any (parseNames gate).
      if (kv.value().is_null() && gates.parse_names) {
        cls.class_level_permissions = DefaultPermissions(class_name, gates);
        continue;
      }
      CRMD_TRY(MergePermissions(kv.value(), cls.class_level_permissions, cls));
    } else if (kv.key() == "timeline") {
      // Spec §2.5: `{"timeline": {...}}` turns the change history on, `{"timeline": null}` off.
      if (kv.value().is_null()) {
        cls.timeline.reset();
        continue;
      }
      if (!kv.value().is_object()) return SchemaError(errors::kInvalidJson, "timeline must be an object or null");
      if (class_name.starts_with('_'))
        return SchemaError(kInvalidSchemaOperation, fmt::format("Class {} is a system class and keeps no timeline.", class_name));
      CRMD_TRY(schema::CheckTimelineConfig(kv.value().get_object()));
      cls.timeline = kv.value().get_object();
    } else if (kv.key() == "triggers") {
      continue;  // ApplyTriggers, once the class has its other changes
    } else if (kv.key() == "indexes") {
      if (!kv.value().is_object()) return BadIndex("indexes must be an object.");
      for (const auto& index : kv.value().get_object()) {
        const std::string name(index.key());
        if (!schema::IsValidFieldName(name) && !(name.size() && name.size() <= schema::kMaxNameLength &&
                                                 schema::IsValidFieldName("i" + name)))
          return BadIndex(fmt::format("Invalid index name: {}.", name));
        const bool remove = index.value().is_object() && index.value().get_object().contains("__op");
        if (remove) {
          const auto* op = index.value().get_object().if_contains("__op");
          if (!op->is_string() || op->get_string() != "Delete") return errors::UnsupportedOperator("__op");
          if (!cls.indexes.erase(name))
            return BadIndex(fmt::format("Index {} does not exist, cannot delete.", name));
          continue;
        }
        if (cls.indexes.contains(name)) return BadIndex(fmt::format("Index {} exists, cannot update.", name));
        CRMD_TRY(CheckIndexSpec(cls, name, index.value()));
        cls.indexes[name] = index.value();
        if (cls.indexes.size() > kMaxIndexesPerClass)
          return BadIndex(fmt::format("A class may have at most {} indexes.", kMaxIndexesPerClass));
      }
    } else {
      return SchemaError(errors::kInvalidJson, fmt::format("{} is not a schema key.", kv.key()));
    }
  }
  return {};
}

// `{"triggers": [...]}` replaces the class's list, checked whole against the class as the body
// left it (docs/TRIGGERS.md).
Status ApplyTriggers(const json::object& body, schema::ClassSchema& cls, const schema::Snapshot& snapshot,
                     const auth::Context& ctx) {
  const auto* triggers = body.if_contains("triggers");
  if (!triggers) return {};
  auto function_exists = [&](std::string_view name) {
    return ctx.credentials && ctx.credentials->functions.find(name) != ctx.credentials->functions.end();
  };
  // Sub-queries of a condition may name the class itself, as the body leaves it.
  const auto with_class = snapshot.With(cls);
  CRMD_ASSIGN(auto checked, triggers::CheckDefinitions(*triggers, cls, *with_class, function_exists));
  cls.triggers = std::move(checked);
  return {};
}

// Saves `cls` in the unit, with the `_Timeline` its timeline needs (made, or grown by the index
// columns it names), and makes both the unit's schema.
Status SaveWithHistory(app::WriteUnit& unit, const schema::ClassSchema* before, schema::ClassSchema cls) {
  auto next = unit.schema();
  if (cls.timeline) {
    CRMD_ASSIGN(auto history, logs::TimelineClassFor(*next, *cls.timeline));
    if (history) {
      unit.txn().SaveClass(next->Find(schema::kTimelineClass), *history);
      next = next->With(std::move(*history));
    }
  }
  unit.txn().SaveClass(before, cls);
  unit.ChangeSchema(next->With(std::move(cls)));
  return {};
}

ApiError NoSuchClass(std::string_view class_name) {
  return ApiError{400, errors::kInvalidClassName, fmt::format("Class {} does not exist.", class_name)};
}

}  // namespace

Result<json::object> CreateSchema(auth::Context& ctx, std::string_view class_name, const json::object& body) {
  return app::RunWrite(ctx, [&](app::WriteUnit& unit) -> Result<json::object> {
    const auto snapshot = unit.schema();  // a copy: ChangeSchema() replaces the unit's
    if (snapshot->Find(class_name))
      return ApiError{400, errors::kInvalidClassName, fmt::format("Class {} already exists.", class_name)};
    for (const auto& [name, other] : snapshot->classes())
      if (schema::EqualsIgnoringCase(name, class_name)) return errors::ClassNameCaseCollision(class_name, name);
    // Spec §2.5: a class created through the schema endpoint starts closed to everyone but keys,
    // unless the application's new classes are open (auth::Gates) and the body sets no permissions.
    schema::ClassSchema cls =
        schema::ClassSchema::NewImplicit(std::string(class_name), !ctx.identity.gates.closed_new_classes);
    CRMD_TRY(ApplyBody(body, class_name, cls, ctx.identity.gates));
    CRMD_TRY(ApplyTriggers(body, cls, *snapshot, ctx));
    json::object out = cls.ToJson();
    CRMD_TRY(SaveWithHistory(unit, nullptr, std::move(cls)));
    return out;
  }, app::WriteStart::kExclusive);
}

Result<json::object> UpdateSchema(auth::Context& ctx, std::string_view class_name, const json::object& body) {
  return app::RunWrite(ctx, [&](app::WriteUnit& unit) -> Result<json::object> {
    const auto snapshot = unit.schema();  // a copy: ChangeSchema() replaces the unit's
    const auto* existing = snapshot->Find(class_name);
    if (!existing) return NoSuchClass(class_name);
    schema::ClassSchema cls = *existing;
    CRMD_TRY(ApplyBody(body, class_name, cls, ctx.identity.gates));
    CRMD_TRY(ApplyTriggers(body, cls, *snapshot, ctx));
    json::object out = cls.ToJson();
    CRMD_TRY(SaveWithHistory(unit, existing, std::move(cls)));
    return out;
  }, app::WriteStart::kExclusive);
}

Result<json::object> DeleteSchema(auth::Context& ctx, std::string_view class_name) {
  return app::RunWrite(ctx, [&](app::WriteUnit& unit) -> Result<json::object> {
    const auto snapshot = unit.schema();  // a copy: ChangeSchema() replaces the unit's
    const auto* existing = snapshot->Find(class_name);
    if (!existing) return NoSuchClass(class_name);
    // `_User` always holds the system user; the others drop where the application allows it
    // (auth::Gates::drop_system_classes), as Parse drops an empty one.
    const bool system = class_name == "_User" || class_name == "_Session" || class_name == "_Role";
    if (system && (class_name == "_User" || !ctx.identity.gates.drop_system_classes))
      return SchemaError(kInvalidSchemaOperation, fmt::format("Class {} is a system class and cannot be dropped.", class_name));
    if (const auto rows = unit.txn().Count(*existing); rows > 0)
      return SchemaError(kInvalidSchemaOperation,
                         fmt::format("Class {} is not empty, contains {} objects, cannot drop schema.", class_name, rows));
    unit.txn().DropClass(*existing);
    unit.Wrote(existing->name);
    if (!system) {
      unit.ChangeSchema(snapshot->Without(class_name));
      return json::object{};
    }
    // A system class exists from an application's first open (sessions and ACL roles rely on
    // it), so it comes back at once as first defined: fields, permissions and indexes of its own.
    for (auto& fresh : schema::SystemClasses()) {
      if (fresh.name != class_name) continue;
      unit.txn().SaveClass(nullptr, fresh);
      unit.ChangeSchema(snapshot->With(std::move(fresh)));
    }
    return json::object{};
  }, app::WriteStart::kExclusive);
}

}  // namespace crmd::write
