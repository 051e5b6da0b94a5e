#include "app/record_change.hpp"

#include <boost/json.hpp>

#include "util/json.hpp"

namespace crmd::app {

namespace json = boost::json;

namespace {

std::string_view KindLetter(RecordChange::Kind kind) {
  switch (kind) {
    case RecordChange::Kind::kCreate: return "c";
    case RecordChange::Kind::kUpdate: return "u";
    case RecordChange::Kind::kDelete: return "d";
  }
  return "u";
}

}  // namespace

std::string EncodeChange(const RecordChange& change, std::size_t max_bytes) {
  json::object out{{"a", change.app_id}, {"c", change.class_name}, {"o", change.object_id}, {"k", KindLetter(change.kind)}};
  json::array fields;
  for (const auto& f : change.fields) fields.emplace_back(f);
  out["f"] = std::move(fields);
  if (change.schema_changed) out["s"] = true;
  if (!change.before.empty()) out["b"] = change.before;
  std::string text = json::serialize(out);
  if (text.size() <= max_bytes) return text;
  out.erase("b");
  text = json::serialize(out);
  if (text.size() <= max_bytes) return text;
  out.erase("f");
  return json::serialize(out);
}

std::optional<RecordChange> DecodeChange(std::string_view text) {
  auto parsed = ParseJson(text);
  if (!parsed.ok() || !parsed.value().is_object()) return std::nullopt;
  const auto& o = parsed.value().get_object();
  auto str = [&](std::string_view key) -> const json::string* {
    const auto* v = o.if_contains(key);
    return v && v->is_string() ? &v->get_string() : nullptr;
  };
  const auto *a = str("a"), *c = str("c"), *id = str("o"), *k = str("k");
  if (!a || !c || !id || !k) return std::nullopt;
  RecordChange change;
  change.app_id = std::string(*a);
  change.class_name = std::string(*c);
  change.object_id = std::string(*id);
  change.kind = RecordChange::Kind::kUpdate;
  if (*k == "c") change.kind = RecordChange::Kind::kCreate;
  else if (*k == "d") change.kind = RecordChange::Kind::kDelete;
  else if (*k != "u") return std::nullopt;
  if (const auto* s = o.if_contains("s"); s && s->is_bool()) change.schema_changed = s->get_bool();
  if (const auto* f = o.if_contains("f"); f && f->is_array())
    for (const auto& name : f->get_array())
      if (name.is_string()) change.fields.emplace_back(name.get_string());
  if (const auto* b = o.if_contains("b"); b && b->is_object()) change.before = b->get_object();
  return change;
}

}  // namespace crmd::app
