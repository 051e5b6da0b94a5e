#include "schema/class_schema.hpp"

#include "schema/names.hpp"
#include "util/errors.hpp"

namespace crmd::schema {

namespace json = boost::json;

const FieldDef* ClassSchema::FindField(std::string_view field) const {
  std::size_t next = fields.size();  // no field to try first: the plain scan
  return FindField(field, next);
}

const FieldDef* ClassSchema::FindField(std::string_view field, std::size_t& next) const {
  if (next < fields.size() && fields[next].first == field) return &fields[next++].second;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (fields[i].first == field) {
      next = i + 1;
      return &fields[i].second;
    }
  }
  return nullptr;
}

json::object ClassSchema::ToJson() const {
  json::object field_map;
  field_map["objectId"] = {{"type", "String"}};
  field_map["createdAt"] = {{"type", "Date"}};
  field_map["updatedAt"] = {{"type", "Date"}};
  field_map["ACL"] = {{"type", "ACL"}};
  for (const auto& [name, def] : fields) {
    json::object f{{"type", TypeName(def.type)}};
    if (def.type == FieldType::kPointer || def.type == FieldType::kRelation)
      f["targetClass"] = def.target_class;
    if (auto it = field_options.find(name); it != field_options.end()) WriteFieldOptions(it->second, f);
    field_map[name] = std::move(f);
  }
  json::object out{{"className", name},
                   {"fields", std::move(field_map)},
                   {"classLevelPermissions", class_level_permissions},
                   {"indexes", indexes},
                   {"triggers", triggers}};
  if (timeline) out["timeline"] = *timeline;
  return out;
}

Result<ClassSchema> ClassSchema::FromJson(const json::object& definition) {
  ClassSchema cls;
  const auto* name = definition.if_contains("className");
  if (!name || !name->is_string()) return errors::BadRequest("class definition without className");
  cls.name = std::string(name->get_string());
  if (const auto* f = definition.if_contains("fields"); f && f->is_object()) {
    for (const auto& kv : f->get_object()) {
      if (IsBuiltinField(kv.key()) && kv.key() != "createdBy" && kv.key() != "updatedBy") continue;
      const auto& spec = kv.value().as_object();
      auto type = ParseTypeName(spec.at("type").as_string());
      if (!type) return errors::BadRequest("unknown field type in stored schema");
      FieldDef def{*type, {}};
      if (const auto* t = spec.if_contains("targetClass"); t && t->is_string())
        def.target_class = std::string(t->get_string());
      CRMD_ASSIGN(auto options, ParseFieldOptions(spec, def, cls.name, kv.key()));
      if (!options.empty()) cls.field_options.emplace(std::string(kv.key()), std::move(options));
      cls.fields.emplace_back(std::string(kv.key()), std::move(def));
    }
  }
  if (const auto* p = definition.if_contains("classLevelPermissions"); p && p->is_object())
    cls.class_level_permissions = p->get_object();
  if (const auto* i = definition.if_contains("indexes"); i && i->is_object())
    cls.indexes = i->get_object();
  if (const auto* t = definition.if_contains("triggers"); t && t->is_array())
    cls.triggers = t->get_array();
  if (const auto* t = definition.if_contains("timeline"); t && t->is_object())
    cls.timeline = t->get_object();
  return cls;
}

json::object DefaultOpenPermissions() {
  json::object open{{"*", true}};
  return json::object{{"find", open},   {"count", open},  {"get", open},
                      {"create", open}, {"update", open}, {"delete", open},
                      {"addField", open}, {"protectedFields", json::object{{"*", json::array{}}}}};
}

json::object ClosedPermissions() {
  return json::object{{"find", json::object{}},   {"count", json::object{}},
                      {"get", json::object{}},    {"create", json::object{}},
                      {"update", json::object{}}, {"delete", json::object{}},
                      {"addField", json::object{}}, {"protectedFields", json::object{}}};
}

ClassSchema ClassSchema::NewImplicit(std::string name, bool open) {
  ClassSchema cls;
  cls.name = std::move(name);
  cls.fields.emplace_back("createdBy", FieldDef{FieldType::kPointer, "_User"});
  cls.fields.emplace_back("updatedBy", FieldDef{FieldType::kPointer, "_User"});
  // System classes hold users, sessions and logs: a keyed first write must not open them to the
  // public. An empty map per operation means "master and API keys only" (spec §2.5). `Config`
  // (spec §4.9, §5.3) is read by keys and signed-in users only, and written by keys.
  if (IsSystemClassName(cls.name)) {
    cls.class_level_permissions = ClosedPermissions();
  } else if (cls.name == "Config") {
    cls.class_level_permissions = ClosedPermissions();
    const json::object signed_in{{"requiresAuthentication", true}};
    for (const char* op : {"find", "count", "get"}) cls.class_level_permissions[op] = signed_in;
  } else if (open) {
    cls.class_level_permissions = DefaultOpenPermissions();
  } else {
    // Spec §2.5 for the raw schema endpoint, and the same for a class a key's first write makes
    // (only keys make classes): closed to everyone but the master and API keys until opened.
    cls.class_level_permissions = ClosedPermissions();
  }
  return cls;
}

const ClassSchema* Snapshot::Find(std::string_view class_name) const {
  auto it = classes_.find(class_name);
  return it == classes_.end() ? nullptr : it->second.get();
}

std::shared_ptr<const Snapshot> Snapshot::Without(std::string_view name) const {
  ClassMap next = classes_;
  if (auto it = next.find(name); it != next.end()) next.erase(it);
  return std::make_shared<const Snapshot>(std::move(next));
}

const triggers::Plan& Snapshot::TriggerPlan(PlanBuilder build) const {
  std::call_once(plan_once_, [&] { plan_ = build(*this); });
  return *plan_;
}

std::shared_ptr<const Snapshot> Snapshot::With(ClassSchema cls) const {
  ClassMap next = classes_;
  std::string key = cls.name;
  next[key] = std::make_shared<const ClassSchema>(std::move(cls));
  return std::make_shared<const Snapshot>(std::move(next));
}

}  // namespace crmd::schema
