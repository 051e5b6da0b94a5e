#include "triggers/plan.hpp"

#include "auth/identity.hpp"
#include "query/where_parser.hpp"
#include "util/json.hpp"
#include "util/log.hpp"

namespace crmd::triggers {

namespace {

// A function call for the application's function queue, one at a time, rather than at once.
bool Queued(const Action& action) {
  if (action.type != ActionType::kServerSideCode) return false;
  const auto* data = action.definition.at("actionData").as_object().at("server-side-code").if_object();
  const auto* q = data ? data->if_contains("useQueue") : nullptr;
  return q && q->is_bool() && q->get_bool();
}

void Lanes(CompiledTrigger& trigger) {
  std::string now;
  for (const auto& action : trigger.definition.actions) {
    std::string& into = Queued(action) ? trigger.queued_actions.emplace_back() : now;
    into += into.empty() ? '[' : ',';
    WriteJson(action.definition, into);
    if (&into != &now) into += ']';
  }
  if (!now.empty()) trigger.now_actions = now + ']';
}

}  // namespace

const std::vector<CompiledTrigger>* Plan::Find(std::string_view class_name) const {
  auto it = classes_.find(class_name);
  return it == classes_.end() ? nullptr : &it->second;
}

std::shared_ptr<const Plan> Plan::Build(const schema::Snapshot& snapshot) {
  auto plan = std::make_shared<Plan>();
  for (const auto& [name, cls] : snapshot.classes()) {
    if (cls->triggers.empty()) continue;
    std::vector<CompiledTrigger> compiled;
    for (const auto& stored : cls->triggers) {
      if (!stored.is_object()) continue;
      auto definition = ParseDefinition(stored.get_object());
      if (!definition.ok()) {
        log::Warn("trigger definition skipped", {{"class", name}, {"error", definition.error().message}});
        continue;
      }
      if (!definition.value().active) continue;
      CompiledTrigger trigger{std::move(definition).value(), std::nullopt, false, {}, {}};
      if (!trigger.definition.wheres.empty()) {
        query::Expr all;
        all.kind = query::ExprKind::kAnd;
        for (const auto& where : trigger.definition.wheres) {
          auto parsed = query::ParseWhere(where, *cls, snapshot, auth::Identity::System());
          if (!parsed.ok()) {
            log::Warn("trigger condition no longer parses; the trigger is off",
                      {{"class", name}, {"trigger", trigger.definition.id}, {"error", parsed.error().message}});
            trigger.broken = true;
            break;
          }
          all.children.push_back(std::move(parsed).value());
        }
        trigger.where = std::move(all);
      }
      if (trigger.broken) continue;
      Lanes(trigger);
      compiled.push_back(std::move(trigger));
    }
    if (!compiled.empty()) plan->classes_.emplace(name, std::move(compiled));
  }
  return plan;
}

}  // namespace crmd::triggers
