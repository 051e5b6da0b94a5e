// The trigger definitions of one schema snapshot in the form a write runs them: typed, with each
// `where` condition parsed against its class (schema::Snapshot::TriggerPlan builds it once per
// snapshot, so a write never parses a definition). Immutable once built; shared by all threads.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "query/where.hpp"
#include "schema/class_schema.hpp"
#include "triggers/definition.hpp"

namespace crmd::triggers {

struct CompiledTrigger {
  Definition definition;
  // The conjunction of its `where` conditions; nullopt: none. A `where` the class's current
  // schema no longer parses (a field changed type since) makes the trigger never fire (logged).
  std::optional<query::Expr> where;
  bool broken = false;
  // Its actions as activations carry them (JSON arrays of their stored definitions), written once
  // per snapshot rather than per firing: those that run as soon as the write is durable, in order
  // (empty when none), and each queued function call (`server-side-code` with `useQueue`) alone.
  std::string now_actions;
  std::vector<std::string> queued_actions;
};

class Plan {
 public:
  // The active triggers of `class_name`, in definition order; null when it has none.
  const std::vector<CompiledTrigger>* Find(std::string_view class_name) const;

  static std::shared_ptr<const Plan> Build(const schema::Snapshot& snapshot);

 private:
  std::map<std::string, std::vector<CompiledTrigger>, std::less<>> classes_;
};

}  // namespace crmd::triggers
