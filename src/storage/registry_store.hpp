// Persistence of the application registry: applications, the hashes of their master and API keys,
// their secrets and functions. `DATA/registry.db` on SQLite; the `crmd` schema on PostgreSQL.
// Written by the CLI, read by the servers. Not thread-safe: each user (the CLI, the server's
// watcher) opens its own RegistryStore.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
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
  // The application's product gates (auth/gates.hpp), as the JSON object text `crmd app set`
  // wrote; empty: the spec's defaults.
  std::string gates = {};
};

// 64 lowercase hex characters of 32 random bytes (libsodium): a new webhook secret.
std::string NewWebhookSecret();

enum class RegistryChange { kDone, kNoSuchApp, kAlreadyExists, kNoSuchKey };

class RegistryStore {
 public:
  virtual ~RegistryStore() = default;

  virtual RegistryChange CreateApp(const AppRecord& app) = 0;
  // A revoked name may be issued again; an active one may not.
  virtual RegistryChange AddApiKey(const std::string& app_id, const ApiKeyRecord& key) = 0;
  virtual RegistryChange RevokeApiKey(const std::string& app_id, const std::string& name,
                                      const std::string& revoked_at) = 0;
  virtual RegistryChange SetRegion(const std::string& app_id, const std::string& region) = 0;
  virtual RegistryChange SetWebhookSecret(const std::string& app_id, const std::string& secret) = 0;
  virtual RegistryChange SetOAuthSecret(const std::string& app_id, const std::string& secret) = 0;
  virtual RegistryChange SetGates(const std::string& app_id, const std::string& gates) = 0;
  // `crmd app rename`: the display name (the id stays: it is in every file address and key).
  virtual RegistryChange SetName(const std::string& app_id, const std::string& name) = 0;
  // `crmd key rotate-master`: the hash of the new master key; the old key is refused from then on.
  virtual RegistryChange SetMasterKeyHash(const std::string& app_id, const std::string& hash) = 0;
  // `crmd app delete`: the application's row, keys and functions (its store is the caller's).
  virtual RegistryChange RemoveApp(const std::string& app_id) = 0;
  // Deploying a name again replaces its code. kNoSuchKey: no function of that name to remove.
  virtual RegistryChange DeployFunction(const std::string& app_id, const FunctionRecord& function) = 0;
  virtual RegistryChange RemoveFunction(const std::string& app_id, const std::string& name) = 0;
  virtual std::vector<AppRecord> LoadAll() = 0;
  std::optional<AppRecord> Load(const std::string& app_id);

  // A consistent copy of the registry in the new SQLite file `path` (`crmd backup`); throws
  // StorageError on PostgreSQL.
  virtual void BackupTo(const std::string& path) = 0;

  // Changes whenever anyone (another connection, another server) commits to the registry: the
  // server's reload trigger.
  virtual std::int64_t DataVersion() = 0;
};

// Whether a --store value names a PostgreSQL database (`postgresql://` or `postgres://`).
bool IsPostgresUrl(std::string_view location);

// Opens the registry, creating its tables or bringing a registry of an earlier release up to date
// (every application then has its own secrets): the `crmd` schema of the PostgreSQL database
// `location` names, or else the SQLite file at the path `location`.
std::unique_ptr<RegistryStore> OpenRegistry(const std::string& location);

// The SQLite registry, `DATA/registry.db`.
std::unique_ptr<RegistryStore> OpenSqliteRegistry(const std::string& path);
// The PostgreSQL registry: the `crmd` schema of the database at `url`.
std::unique_ptr<RegistryStore> OpenPostgresRegistry(const std::string& url);

}  // namespace crmd::storage
