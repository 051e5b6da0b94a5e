// Persistence of the application registry, `DATA/registry.db`: applications, the hashes of their
// master and API keys, and their webhook secrets. Written by the CLI, read by the server.
// Not thread-safe: each user (the CLI, the server's watcher) opens its own RegistryStore.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace crmd::storage {

struct ApiKeyRecord {
  std::string name;
  std::string key_hash;
  std::string created_at;
  std::optional<std::string> revoked_at;
};

// An operator-deployed function (spec §4.9): Lua source, run by `POST /functions/{app}/{name}`.
struct FunctionRecord {
  std::string name;
  std::string code;
  std::string deployed_at;
};

struct AppRecord {
  std::string app_id;
  std::string name;
  std::string master_key_hash;
  std::string created_at;
  std::vector<ApiKeyRecord> api_keys;  // active and revoked
  // Where the application's phone numbers without a country code are from (ISO 3166 alpha-2).
  std::string region = "IL";
  std::vector<FunctionRecord> functions;
  // Keys the signatures of the application's webhooks (docs/TRIGGERS.md). Stored as is, not
  // hashed: the server signs with it. Empty on CreateApp: the store draws one.
  std::string webhook_secret;
  // Keys what crmd's OAuth server signs for the application's MCP sign-in (client ids, consent
  // tickets) and marks its tokens with: rotating it ends every client registration and token.
  // Empty on CreateApp: the store draws one.
  std::string oauth_secret;
};

// 64 lowercase hex characters of 32 random bytes (libsodium): a new webhook secret.
std::string NewWebhookSecret();

enum class RegistryChange { kDone, kNoSuchApp, kAlreadyExists, kNoSuchKey };

class RegistryStore {
 public:
  // Creates the tables, or brings a registry of an earlier release up to date (every application
  // then has its own webhook secret).
  explicit RegistryStore(const std::string& path);
  ~RegistryStore();
  RegistryStore(const RegistryStore&) = delete;
  RegistryStore& operator=(const RegistryStore&) = delete;

  RegistryChange CreateApp(const AppRecord& app);
  // A revoked name may be issued again; an active one may not.
  RegistryChange AddApiKey(const std::string& app_id, const ApiKeyRecord& key);
  RegistryChange RevokeApiKey(const std::string& app_id, const std::string& name,
                              const std::string& revoked_at);
  RegistryChange SetRegion(const std::string& app_id, const std::string& region);
  RegistryChange SetWebhookSecret(const std::string& app_id, const std::string& secret);
  RegistryChange SetOAuthSecret(const std::string& app_id, const std::string& secret);
  // Deploying a name again replaces its code. kNoSuchKey: no function of that name to remove.
  RegistryChange DeployFunction(const std::string& app_id, const FunctionRecord& function);
  RegistryChange RemoveFunction(const std::string& app_id, const std::string& name);
  std::vector<AppRecord> LoadAll();
  std::optional<AppRecord> Load(const std::string& app_id);

  // Changes whenever another connection commits to the registry: the server's reload trigger.
  std::int64_t DataVersion();

 private:
  struct Impl;
  Impl* impl_;
};

}  // namespace crmd::storage
