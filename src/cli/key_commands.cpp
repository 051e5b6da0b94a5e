// `crmd key create|revoke|list|rotate-master`: an application's named API keys (spec §5.2).
#include "cli/commands.hpp"

#include "storage/registry_store.hpp"
#include "util/ids.hpp"
#include "util/time.hpp"
#include "cli/admin.hpp"
#include "util/json.hpp"

namespace crmd::cli {

namespace json = boost::json;

int CreateKey(const AdminArgs& args) {
  const std::string &data = args.data, &app_id = args.app_id, &name = args.name;
  if (!IsValidKeyName(name)) return Fail("--name must be 1-64 of [A-Za-z0-9._-]");
  const std::string key = ids::NewSecret();
  auto registry_store = OpenRegistryOf(data);
  auto& store = *registry_store;
  switch (store.AddApiKey(app_id, {name, ids::HashSecret(key), timeutil::NowIso(), std::nullopt})) {
    case storage::RegistryChange::kNoSuchApp: return Fail("no application " + app_id);
    case storage::RegistryChange::kAlreadyExists: return Fail("an active key named " + name + " exists");
    default: break;
  }
  Print(json::object{{"apiKey", key}});
  return 0;
}

int RevokeKey(const AdminArgs& args) {
  const std::string &data = args.data, &app_id = args.app_id, &name = args.name;
  auto registry_store = OpenRegistryOf(data);
  auto& store = *registry_store;
  if (!store.Load(app_id)) return Fail("no application " + app_id);
  if (store.RevokeApiKey(app_id, name, timeutil::NowIso()) != storage::RegistryChange::kDone)
    return Fail("no active key named " + name);
  Print(json::object{{"revoked", name}});
  return 0;
}

// Issue 35: a master key can be replaced. The new one is printed once (only its hash is kept); a
// running server refuses the old one within a second (the registry's poll).
int RotateMasterKey(const AdminArgs& args) {
  const std::string master = ids::NewSecret();
  if (OpenRegistryOf(args.data)->SetMasterKeyHash(args.app_id, ids::HashSecret(master)) != storage::RegistryChange::kDone)
    return Fail("no application " + args.app_id);
  Print(json::object{{"appId", args.app_id}, {"masterKey", master}});
  return 0;
}

int ListKeys(const AdminArgs& args) {
  const std::string &data = args.data, &app_id = args.app_id;
  auto registry_store = OpenRegistryOf(data);
  auto& store = *registry_store;
  auto app = store.Load(app_id);
  if (!app) return Fail("no application " + app_id);
  json::array keys;
  for (const auto& k : app->api_keys) {
    json::object o{{"name", k.name}, {"createdAt", k.created_at}};
    o["revokedAt"] = k.revoked_at ? json::value(*k.revoked_at) : json::value(nullptr);
    keys.push_back(std::move(o));
  }
  Print(json::object{{"appId", app_id}, {"keys", std::move(keys)}});
  return 0;
}

}  // namespace crmd::cli
