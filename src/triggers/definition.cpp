#include "triggers/definition.hpp"

#include <fmt/format.h>

#include <set>

#include "auth/identity.hpp"
#include "query/where_parser.hpp"
#include "schema/names.hpp"
#include "triggers/webhook.hpp"
#include "util/errors.hpp"
#include "util/ids.hpp"
#include "util/json.hpp"

namespace crmd::triggers {

namespace json = boost::json;

namespace {

struct TypeInfo {
  ActionType type;
  std::string_view name;
};
constexpr TypeInfo kTypes[] = {
    {ActionType::kCreateRecord, "create-record"}, {ActionType::kUpdateRecord, "update-record"},
    {ActionType::kSendEmail, "send-email"},       {ActionType::kNotification, "notification"},
    {ActionType::kWebhook, "webhook"},            {ActionType::kServerSideCode, "server-side-code"},
};

// Classes no trigger may watch: crmd's own bookkeeping, which its own writes fill.
bool IsUnwatchable(std::string_view class_name) {
  return class_name == "_Session" || class_name == "_Timeline" || class_name == "_RequestLog" ||
         class_name.starts_with("_syslog");
}

// The checks of one list, with the place of what is being checked for messages.
class Checker {
 public:
  Checker(const schema::ClassSchema& cls, const schema::Snapshot& snapshot, const FunctionExists& function_exists)
      : cls_(cls), snapshot_(snapshot), function_exists_(function_exists) {}

  Result<json::array> List(const json::value& triggers) {
    if (!triggers.is_array()) return Bad("triggers must be an array");
    const auto& list = triggers.get_array();
    if (!list.empty() && IsUnwatchable(cls_.name))
      return Bad(fmt::format("class {} cannot have triggers", cls_.name));
    if (list.size() > kMaxTriggersPerClass)
      return Bad(fmt::format("a class may have at most {} triggers", kMaxTriggersPerClass));
    json::array out;
    for (std::size_t i = 0; i < list.size(); ++i) {
      place_ = fmt::format("triggers[{}]", i);
      CRMD_ASSIGN(auto definition, One(list[i]));
      out.emplace_back(std::move(definition));
    }
    return out;
  }

 private:
  ApiError Bad(std::string_view what) const {
    return ApiError{400, errors::kInvalidJson, place_.empty() ? std::string(what) : fmt::format("{}: {}", place_, what)};
  }

  // An `_id` as sent (kept) or drawn, unique among the class's triggers and actions.
  Result<std::string> Id(const json::object& o) {
    std::string id;
    if (const auto* sent = o.if_contains("_id")) {
      if (!sent->is_string() || !ids::IsAlnumId(sent->get_string(), ids::kObjectIdLength) ||
          sent->get_string().size() != ids::kObjectIdLength)
        return Bad(fmt::format("_id must be {} letters and digits", ids::kObjectIdLength));
      id = std::string(sent->get_string());
      if (!ids_.insert(id).second) return Bad(fmt::format("duplicate _id {}", id));
      return id;
    }
    do id = ids::RandomAlnum(ids::kObjectIdLength);
    while (!ids_.insert(id).second);
    return id;
  }

  Status OnlyKeys(const json::object& o, std::initializer_list<std::string_view> allowed) const {
    for (const auto& kv : o)
      if (std::find(allowed.begin(), allowed.end(), kv.key()) == allowed.end())
        return Bad(fmt::format("unknown key {}", kv.key()));
    return {};
  }

  Result<std::string> Text(const json::object& o, std::string_view key, bool required, std::size_t max = 100'000) const {
    const auto* v = o.if_contains(key);
    if (!v) {
      if (required) return Bad(fmt::format("{} is required", key));
      return std::string();
    }
    if (!v->is_string()) return Bad(fmt::format("{} must be a string", key));
    if (required && v->get_string().empty()) return Bad(fmt::format("{} must not be empty", key));
    if (v->get_string().size() > max) return Bad(fmt::format("{} is longer than {} characters", key, max));
    return std::string(v->get_string());
  }

  Result<json::object> One(const json::value& value) {
    if (!value.is_object()) return Bad("a trigger must be an object");
    const auto& o = value.get_object();
    CRMD_TRY(OnlyKeys(o, {"_id", "name", "active", "event", "conditions", "actions"}));
    CRMD_ASSIGN(auto id, Id(o));
    CRMD_ASSIGN(auto name, Text(o, "name", false, kMaxNameLength));
    bool active = true;
    if (const auto* a = o.if_contains("active")) {
      if (!a->is_bool()) return Bad("active must be true or false");
      active = a->get_bool();
    }
    const auto* event = o.if_contains("event");
    if (!event) return Bad("event is required");
    const std::string_view ev = event->is_string() ? std::string_view(event->get_string()) : std::string_view();
    if (ev != "create" && ev != "update" && ev != "delete" && ev != "save")
      return Bad(fmt::format("unknown event {}; expected create, update, delete or save", ToJson(*event)));
    json::array conditions;
    if (const auto* c = o.if_contains("conditions")) {
      if (!c->is_array()) return Bad("conditions must be an array");
      for (std::size_t i = 0; i < c->get_array().size(); ++i) {
        CRMD_ASSIGN(auto condition, Condition(c->get_array()[i], i));
        conditions.emplace_back(std::move(condition));
      }
    }
    const auto* actions = o.if_contains("actions");
    if (!actions || !actions->is_array()) return Bad("actions must be an array");
    if (actions->get_array().size() > kMaxActionsPerTrigger)
      return Bad(fmt::format("a trigger may have at most {} actions", kMaxActionsPerTrigger));
    json::array checked;
    const std::string trigger_place = place_;
    for (std::size_t i = 0; i < actions->get_array().size(); ++i) {
      place_ = fmt::format("{}.actions[{}]", trigger_place, i);
      CRMD_ASSIGN(auto action, ActionOf(actions->get_array()[i], ev == "delete"));
      checked.emplace_back(std::move(action));
    }
    place_ = trigger_place;
    return json::object{{"_id", id},           {"name", name},          {"active", active}, {"event", ev},
                        {"conditions", std::move(conditions)}, {"actions", std::move(checked)}};
  }

  Result<json::object> Condition(const json::value& value, std::size_t i) {
    const auto where_place = fmt::format("{}.conditions[{}]", place_, i);
    const auto* o = value.if_object();
    if (!o || o->size() != 1 || (!o->contains("where") && !o->contains("changed")))
      return ApiError{400, errors::kInvalidJson,
                      fmt::format("{}: a condition is {{\"where\": {{...}}}} or {{\"changed\": [fields]}}", where_place)};
    if (const auto* where = o->if_contains("where")) {
      if (!where->is_object())
        return ApiError{400, errors::kInvalidJson, fmt::format("{}.where must be an object", where_place)};
      // The record API's own parser, with master rights: a where it refuses is refused here.
      auto parsed = query::ParseWhere(*where, cls_, snapshot_, auth::Identity::System());
      if (!parsed.ok())
        return ApiError{400, errors::kInvalidJson, fmt::format("{}.where: {}", where_place, parsed.error().message)};
      return *o;
    }
    const auto& changed = o->at("changed");
    if (!changed.is_array() || changed.get_array().empty())
      return ApiError{400, errors::kInvalidJson, fmt::format("{}.changed must be a list of field names", where_place)};
    for (const auto& f : changed.get_array())
      if (!f.is_string() || !schema::IsValidFieldName(f.get_string()))
        return ApiError{400, errors::kInvalidJson,
                        fmt::format("{}.changed: {} is not a field name", where_place, ToJson(f))};
    return *o;
  }

  Result<json::object> ActionOf(const json::value& value, bool on_delete) {
    if (!value.is_object()) return Bad("an action must be an object");
    const auto& o = value.get_object();
    CRMD_TRY(OnlyKeys(o, {"_id", "actionType", "actionData"}));
    CRMD_ASSIGN(auto id, Id(o));
    const auto* type_value = o.if_contains("actionType");
    const auto type = type_value && type_value->is_string() ? ParseActionType(type_value->get_string()) : std::nullopt;
    if (!type)
      return Bad(fmt::format("unknown actionType {}",
                             type_value ? ToJson(*type_value) : std::string("(missing)")));
    const std::string_view type_name = ActionTypeName(*type);
    const auto* data_value = o.if_contains("actionData");
    const auto* wrapper = data_value ? data_value->if_object() : nullptr;
    const auto* inner = wrapper ? wrapper->if_contains(type_name) : nullptr;
    if (!inner || !inner->is_object() || wrapper->size() != 1)
      return Bad(fmt::format("actionData must be {{\"{}\": {{...}}}}", type_name));
    const auto& data = inner->get_object();
    switch (*type) {
      case ActionType::kCreateRecord: {
        CRMD_TRY(OnlyKeys(data, {"table", "data"}));
        CRMD_ASSIGN(auto table, Text(data, "table", true, schema::kMaxNameLength));
        if (!snapshot_.Find(table) && table != cls_.name) return Bad(fmt::format("unknown table {}", table));
        if (IsUnwatchable(table)) return Bad(fmt::format("table {} is written by crmd only", table));
        CRMD_TRY(ObjectField(data, "data", true));
        break;
      }
      case ActionType::kUpdateRecord:
        if (on_delete) return Bad("update-record cannot follow a delete: the record is gone");
        CRMD_TRY(OnlyKeys(data, {"data"}));
        CRMD_TRY(ObjectField(data, "data", true));
        break;
      case ActionType::kSendEmail:
        CRMD_TRY(OnlyKeys(data, {"to", "subject", "html"}));
        CRMD_TRY(Text(data, "to", true, 1000));
        CRMD_TRY(Text(data, "subject", false, 1000));
        CRMD_TRY(Text(data, "html", false));
        break;
      case ActionType::kNotification:
        CRMD_TRY(OnlyKeys(data, {"user", "content", "icon"}));
        CRMD_TRY(Text(data, "user", true, 100));
        CRMD_TRY(Text(data, "content", false, 10'000));
        CRMD_TRY(Text(data, "icon", false, 1000));
        break;
      case ActionType::kWebhook: {
        CRMD_TRY(OnlyKeys(data, {"url", "headers"}));
        CRMD_ASSIGN(auto url, Text(data, "url", true, 100'000));
        if (auto wrong = CheckWebhookUrl(url)) return Bad(fmt::format("url: {}", *wrong));
        if (const auto* headers = data.if_contains("headers"))
          if (auto wrong = CheckWebhookHeaders(*headers)) return Bad(fmt::format("headers: {}", *wrong));
        break;
      }
      case ActionType::kServerSideCode: {
        CRMD_TRY(OnlyKeys(data, {"functionName", "useQueue"}));
        CRMD_ASSIGN(auto name, Text(data, "functionName", true, 64));
        if (!function_exists_ || !function_exists_(name)) return Bad(fmt::format("unknown function {}", name));
        if (const auto* q = data.if_contains("useQueue"); q && !q->is_bool()) return Bad("useQueue must be true or false");
        break;
      }
    }
    return json::object{{"_id", id}, {"actionType", type_name}, {"actionData", *wrapper}};
  }

  Status ObjectField(const json::object& o, std::string_view key, bool required) const {
    const auto* v = o.if_contains(key);
    if (!v) return required ? Status(Bad(fmt::format("{} is required", key))) : Status();
    if (!v->is_object()) return Bad(fmt::format("{} must be an object", key));
    return {};
  }

  const schema::ClassSchema& cls_;
  const schema::Snapshot& snapshot_;
  const FunctionExists& function_exists_;
  std::set<std::string> ids_;
  std::string place_;
};

}  // namespace

std::string_view EventName(WriteEvent event) {
  switch (event) {
    case WriteEvent::kCreate: return "create";
    case WriteEvent::kUpdate: return "update";
    case WriteEvent::kDelete: return "delete";
  }
  return "update";
}

std::optional<ActionType> ParseActionType(std::string_view name) {
  for (const auto& t : kTypes)
    if (t.name == name) return t.type;
  return std::nullopt;
}

std::string_view ActionTypeName(ActionType type) {
  for (const auto& t : kTypes)
    if (t.type == type) return t.name;
  return "create-record";
}

bool Definition::FiresOn(WriteEvent event) const {
  switch (event) {
    case WriteEvent::kCreate: return on_create;
    case WriteEvent::kUpdate: return on_update;
    case WriteEvent::kDelete: return on_delete;
  }
  return false;
}

Result<json::array> CheckDefinitions(const json::value& triggers, const schema::ClassSchema& cls,
                                     const schema::Snapshot& snapshot, const FunctionExists& function_exists) {
  return Checker(cls, snapshot, function_exists).List(triggers);
}

Result<Definition> ParseDefinition(const json::object& stored) {
  Definition d;
  const auto* id = stored.if_contains("_id");
  const auto* event = stored.if_contains("event");
  const auto* actions = stored.if_contains("actions");
  if (!id || !id->is_string() || !event || !event->is_string() || !actions || !actions->is_array())
    return errors::BadRequest("stored trigger without _id, event or actions");
  d.id = std::string(id->get_string());
  if (const auto* a = stored.if_contains("active"); a && a->is_bool()) d.active = a->get_bool();
  const std::string_view ev = event->get_string();
  d.on_create = ev == "create" || ev == "save";
  d.on_update = ev == "update" || ev == "save";
  d.on_delete = ev == "delete";
  if (const auto* c = stored.if_contains("conditions"); c && c->is_array()) {
    for (const auto& condition : c->get_array()) {
      const auto* o = condition.if_object();
      if (!o) continue;
      if (const auto* w = o->if_contains("where"); w && w->is_object()) d.wheres.push_back(w->get_object());
      if (const auto* ch = o->if_contains("changed"); ch && ch->is_array()) {
        std::vector<std::string> fields;
        for (const auto& f : ch->get_array())
          if (f.is_string()) fields.emplace_back(f.get_string());
        d.changed.push_back(std::move(fields));
      }
    }
  }
  for (const auto& a : actions->get_array()) {
    const auto* o = a.if_object();
    const auto* aid = o ? o->if_contains("_id") : nullptr;
    const auto* type = o ? o->if_contains("actionType") : nullptr;
    auto parsed = type && type->is_string() ? ParseActionType(type->get_string()) : std::nullopt;
    if (!aid || !aid->is_string() || !parsed) return errors::BadRequest("stored trigger action without _id or type");
    d.actions.push_back(Action{std::string(aid->get_string()), *parsed, *o});
  }
  return d;
}

}  // namespace crmd::triggers
