#include "triggers/activation.hpp"

#include <fmt/format.h>

#include "util/errors.hpp"
#include "util/json.hpp"

namespace crmd::triggers {

namespace json = boost::json;

std::string PayloadText(const PayloadParts& parts) {
  std::string out;
  out.reserve(parts.record_json.size() + parts.actions_json.size() + 160);
  const auto text = [&out](std::string_view key, std::string_view value) {
    out += key;
    AppendJsonString(value, out);
  };
  text("{\"class\":", parts.class_name);
  text(",\"trigger\":", parts.trigger_id);
  text(",\"event\":", parts.event);
  text(",\"object\":", parts.object_id);
  out += ",\"record\":";
  out += parts.record_json;
  out += ",\"step\":";
  out += std::to_string(parts.step);
  text(",\"source\":", parts.source);
  out += ",\"actions\":";
  out += parts.actions_json;
  out += ",\"done\":";
  out += std::to_string(parts.done);
  if (!parts.root.empty()) text(",\"root\":", parts.root);
  out += '}';
  return out;
}

std::string Activation::Serialize() const {
  std::string record_json;
  WriteJson(record, record_json);
  std::string actions_json = "[";
  for (const auto& action : actions) {
    if (actions_json.size() > 1) actions_json += ',';
    WriteJson(action, actions_json);
  }
  actions_json += ']';
  return PayloadText({class_name, trigger_id, event, object_id, record_json, step, source, root, actions_json, done});
}

Result<Activation> Activation::Parse(std::string_view payload) {
  auto parsed = ParseJson(payload);
  if (!parsed.ok() || !parsed.value().is_object()) return errors::BadRequest("unreadable trigger activation");
  auto& o = parsed.value().get_object();
  Activation a;
  try {
    a.class_name = std::string(o.at("class").as_string());
    a.trigger_id = std::string(o.at("trigger").as_string());
    a.event = std::string(o.at("event").as_string());
    a.object_id = std::string(o.at("object").as_string());
    a.record = std::move(o.at("record").as_object());  // the same storage: moved, not copied
    a.step = static_cast<int>(o.at("step").to_number<std::int64_t>());
    a.source = std::string(o.at("source").as_string());
    a.actions = std::move(o.at("actions").as_array());
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
