// `crmd files gc`: uploads no record names (spec §3.3).
#include "cli/commands.hpp"

#include <chrono>
#include <optional>

#include "app/application.hpp"
#include "files/orphans.hpp"
#include "storage/registry_store.hpp"
#include "write/prepare_application.hpp"
#include "cli/admin.hpp"
#include "util/json.hpp"

namespace crmd::cli {

namespace json = boost::json;

namespace {

// `<n>d`, `<n>h`, `<n>m` or `<n>s`.
std::optional<std::chrono::seconds> ParseAge(const std::string& text) {
  if (text.size() < 2 || text.size() > 12) return std::nullopt;
  std::int64_t n = 0;
  for (std::size_t i = 0; i + 1 < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
    n = n * 10 + (text[i] - '0');
  }
  switch (text.back()) {
    case 'd': return std::chrono::seconds(n * 86400);
    case 'h': return std::chrono::seconds(n * 3600);
    case 'm': return std::chrono::seconds(n * 60);
    case 's': return std::chrono::seconds(n);
    default: return std::nullopt;
  }
}

}  // namespace

int CollectFiles(const AdminArgs& args) {
  const std::string &data = args.data, &app_id = args.app_id, &older_than = args.older_than;
  const auto age = ParseAge(older_than);
  if (!age) return Fail("--older-than must be <n>d, <n>h, <n>m or <n>s");
  auto registry_store = OpenRegistryOf(data);
  auto& store = *registry_store;
  if (!store.Load(app_id)) return Fail("no application " + app_id);
  app::Applications apps(data, AdminStores(), {}, write::PrepareApplication);
  auto app = apps.Open(app_id);
  const auto collected = files::RemoveOrphans(*app, *age);
  json::array removed;
  for (const auto& name : collected.removed) removed.emplace_back(name);
  Print(json::object{{"appId", app_id}, {"removed", std::move(removed)}, {"kept", static_cast<std::int64_t>(collected.kept)}});
  return 0;
}

}  // namespace crmd::cli
