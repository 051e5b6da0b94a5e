#include "triggers/plan.hpp"

#include "auth/identity.hpp"
#include "query/where_parser.hpp"
#include "util/log.hpp"

namespace crmd::triggers {

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
      CompiledTrigger trigger{std::move(definition).value(), std::nullopt, false};
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
      if (!trigger.broken) compiled.push_back(std::move(trigger));
    }
    if (!compiled.empty()) plan->classes_.emplace(name, std::move(compiled));
  }
  return plan;
}

}  // namespace crmd::triggers
