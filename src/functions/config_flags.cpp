#include "functions/config_flags.hpp"

#include <optional>

#include "util/json.hpp"

namespace crmd::functions {

namespace {

constexpr std::string_view kConfigClass = "Config";

bool ReadFlag(app::Application& app, const schema::Snapshot& snapshot, std::string_view flag) {
  const auto* cls = snapshot.Find(kConfigClass);
  if (!cls || !cls->FindField("Name") || !cls->FindField("Value")) return false;
  schema::Query q;
  q.where = schema::FieldEquals("Name", std::string(flag));
  q.order = {{"createdAt", false}, {"objectId", false}};
  q.limit = 1;
  std::optional<storage::Row> first;
  app.db().Find(*cls, q, [&](storage::Row& row) {
    first = std::move(row);
    return false;
  });
  if (!first) return false;
  auto value = ParseJson(storage::TextOf(*cls, *first, "Value"));
  if (!value.ok() || !value.value().is_object()) return false;
  const auto* on = value.value().get_object().if_contains(flag);
  return on && on->is_bool() && on->get_bool();
}

}  // namespace

bool ConfigFlag(app::Application& app, std::string_view flag) {
  const std::uint64_t generation = app.Generation(kConfigClass);  // before the read: see Generation
  if (auto cached = app.CachedFlag(flag, generation)) return *cached;
  const bool on = ReadFlag(app, *app.schema(), flag);
  app.CacheFlag(flag, generation, on);
  return on;
}

}  // namespace crmd::functions
