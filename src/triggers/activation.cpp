#include "triggers/activation.hpp"

#include <fmt/format.h>

#include "util/errors.hpp"
#include "util/json.hpp"

namespace crmd::triggers {

namespace json = boost::json;

std::string Activation::Serialize() const {
  json::object o{{"class", class_name},   {"trigger", trigger_id}, {"event", event},
                 {"object", object_id},   {"record", record},      {"step", step},
                 {"source", source},      {"actions", actions},    {"done", done}};
  if (!root.empty()) o["root"] = root;
  return ToJson(o);
}

Result<Activation> Activation::Parse(std::string_view payload) {
  auto parsed = ParseJson(payload);
  if (!parsed.ok() || !parsed.value().is_object()) return errors::BadRequest("unreadable trigger activation");
  const auto& o = parsed.value().get_object();
  Activation a;
  try {
    a.class_name = std::string(o.at("class").as_string());
    a.trigger_id = std::string(o.at("trigger").as_string());
    a.event = std::string(o.at("event").as_string());
    a.object_id = std::string(o.at("object").as_string());
    a.record = o.at("record").as_object();
    a.step = static_cast<int>(o.at("step").to_number<std::int64_t>());
    a.source = std::string(o.at("source").as_string());
    a.actions = o.at("actions").as_array();
    a.done = static_cast<std::size_t>(o.at("done").to_number<std::int64_t>());
    if (const auto* root = o.if_contains("root"); root && root->is_string()) a.root = std::string(root->get_string());
  } catch (const std::exception& e) {
    return errors::BadRequest(fmt::format("unreadable trigger activation: {}", e.what()));
  }
  return a;
}

std::string FanOutText(std::string_view source_trigger) {
  return fmt::format("blocked! trigger fan-out is past {} actions of one write. source trigger: {}",
                     kMaxActionsPerWrite, source_trigger);
}

std::string BlockedText(std::string_view source_trigger) {
  return fmt::format("blocked! trigger step is to deep -{}. source trigger: {}", kMaxChainDepth, source_trigger);
}

}  // namespace crmd::triggers
