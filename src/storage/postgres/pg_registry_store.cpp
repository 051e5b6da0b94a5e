// The registry on PostgreSQL: the tables of the `crmd` schema (pg_stores.cpp), one connection per
// user as on SQLite. Every change also moves `crmd.registry_version` in its transaction, which
// every server polls: a key revoked through one server's CLI is refused by all within a poll.
#include "storage/postgres/connection.hpp"
#include "storage/postgres/pg_store.hpp"
#include "storage/registry_store.hpp"
#include "storage/storage_error.hpp"

namespace crmd::storage {

namespace {

using postgres::Connection;

std::string Text(const postgres::Rows& rows, int r, int c) { return std::string(rows.Value(r, c).value_or("")); }

class PostgresRegistry final : public RegistryStore {
 public:
  explicit PostgresRegistry(const std::string& url) : c_(url) { postgres::EnsureCrmdSchema(c_); }

  RegistryChange CreateApp(const AppRecord& app) override {
    return Change([&] {
      if (Exists(app.app_id)) return RegistryChange::kAlreadyExists;
      c_.Query("INSERT INTO crmd.apps (app_id, name, master_key_hash, created_at, region, webhook_secret, oauth_secret, gates) "
               "VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
               {app.app_id, app.name, app.master_key_hash, app.created_at, app.region,
                app.webhook_secret.empty() ? NewWebhookSecret() : app.webhook_secret,
                app.oauth_secret.empty() ? NewWebhookSecret() : app.oauth_secret, app.gates});
      for (const auto& key : app.api_keys) InsertKey(app.app_id, key);
      return RegistryChange::kDone;
    });
  }

  RegistryChange AddApiKey(const std::string& app_id, const ApiKeyRecord& key) override {
    return Change([&] {
      if (!Exists(app_id)) return RegistryChange::kNoSuchApp;
      auto rows = c_.Query("SELECT revoked_at FROM crmd.api_keys WHERE app_id = $1 AND name = $2 FOR UPDATE",
                           {app_id, key.name});
      if (rows.size() > 0 && !rows.Value(0, 0)) return RegistryChange::kAlreadyExists;
      InsertKey(app_id, key);
      return RegistryChange::kDone;
    });
  }

  RegistryChange RevokeApiKey(const std::string& app_id, const std::string& name, const std::string& revoked_at) override {
    return Change([&] {
      const auto changed = c_.Query("UPDATE crmd.api_keys SET revoked_at = $1 WHERE app_id = $2 AND name = $3 "
                                    "AND revoked_at IS NULL",
                                    {revoked_at, app_id, name})
                               .Affected();
      return changed > 0 ? RegistryChange::kDone : RegistryChange::kNoSuchKey;
    });
  }

  RegistryChange SetRegion(const std::string& app_id, const std::string& region) override {
    return SetColumn("region", app_id, region);
  }
  RegistryChange SetWebhookSecret(const std::string& app_id, const std::string& secret) override {
    if (secret.empty()) throw std::invalid_argument("an application's secret may not be empty");
    return SetColumn("webhook_secret", app_id, secret);
  }
  RegistryChange SetOAuthSecret(const std::string& app_id, const std::string& secret) override {
    if (secret.empty()) throw std::invalid_argument("an application's secret may not be empty");
    return SetColumn("oauth_secret", app_id, secret);
  }

  RegistryChange SetGates(const std::string& app_id, const std::string& gates) override {
    return SetColumn("gates", app_id, gates);
  }

  RegistryChange SetName(const std::string& app_id, const std::string& name) override {
    return SetColumn("name", app_id, name);
  }
  RegistryChange SetMasterKeyHash(const std::string& app_id, const std::string& hash) override {
    if (hash.empty()) throw std::invalid_argument("a master key hash may not be empty");
    return SetColumn("master_key_hash", app_id, hash);
  }

  RegistryChange RemoveApp(const std::string& app_id) override {
    return Change([&] {
      if (!Exists(app_id)) return RegistryChange::kNoSuchApp;
      for (const char* table : {"crmd.api_keys", "crmd.functions", "crmd.apps"})
        c_.Query(std::string("DELETE FROM ") + table + " WHERE app_id = $1", {app_id});
      return RegistryChange::kDone;
    });
  }

  RegistryChange DeployFunction(const std::string& app_id, const FunctionRecord& function) override {
    return Change([&] {
      if (!Exists(app_id)) return RegistryChange::kNoSuchApp;
      c_.Query("INSERT INTO crmd.functions (app_id, name, code, deployed_at) VALUES ($1, $2, $3, $4) "
               "ON CONFLICT (app_id, name) DO UPDATE SET code = excluded.code, deployed_at = excluded.deployed_at",
               {app_id, function.name, function.code, function.deployed_at});
      return RegistryChange::kDone;
    });
  }

  RegistryChange RemoveFunction(const std::string& app_id, const std::string& name) override {
    return Change([&] {
      if (!Exists(app_id)) return RegistryChange::kNoSuchApp;
      const auto removed = c_.Query("DELETE FROM crmd.functions WHERE app_id = $1 AND name = $2", {app_id, name}).Affected();
      return removed > 0 ? RegistryChange::kDone : RegistryChange::kNoSuchKey;
    });
  }

  std::vector<AppRecord> LoadAll() override {
    // One snapshot for the three reads: an application and its keys as of one moment.
    c_.Exec("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
    std::vector<AppRecord> apps;
    try {
      auto rows = c_.Query(
          "SELECT app_id, name, master_key_hash, created_at, region, webhook_secret, oauth_secret, gates FROM crmd.apps "
          "ORDER BY app_id");
      for (int r = 0; r < rows.size(); ++r) {
        AppRecord app;
        app.app_id = Text(rows, r, 0);
        app.name = Text(rows, r, 1);
        app.master_key_hash = Text(rows, r, 2);
        app.created_at = Text(rows, r, 3);
        app.region = Text(rows, r, 4);
        app.webhook_secret = Text(rows, r, 5);
        app.oauth_secret = Text(rows, r, 6);
        app.gates = Text(rows, r, 7);
        apps.push_back(std::move(app));
      }
      auto find = [&](const std::string& id) -> AppRecord* {
        auto it = std::lower_bound(apps.begin(), apps.end(), id, [](const AppRecord& a, const std::string& k) { return a.app_id < k; });
        return it != apps.end() && it->app_id == id ? &*it : nullptr;
      };
      auto keys = c_.Query("SELECT app_id, name, key_hash, created_at, revoked_at FROM crmd.api_keys ORDER BY app_id, name");
      for (int r = 0; r < keys.size(); ++r)
        if (auto* app = find(Text(keys, r, 0))) {
          ApiKeyRecord key{Text(keys, r, 1), Text(keys, r, 2), Text(keys, r, 3), std::nullopt};
          if (keys.Value(r, 4)) key.revoked_at = Text(keys, r, 4);
          app->api_keys.push_back(std::move(key));
        }
      auto functions = c_.Query("SELECT app_id, name, code, deployed_at FROM crmd.functions ORDER BY app_id, name");
      for (int r = 0; r < functions.size(); ++r)
        if (auto* app = find(Text(functions, r, 0)))
          app->functions.push_back({Text(functions, r, 1), Text(functions, r, 2), Text(functions, r, 3)});
      c_.Exec("COMMIT");
    } catch (...) {
      if (c_.Healthy() && c_.InTransaction()) c_.Exec("ROLLBACK");
      throw;
    }
    return apps;
  }

  void BackupTo(const std::string&) override {
    throw StorageError("crmd backup copies SQLite registries; on PostgreSQL use pg_dump --schema=crmd --schema='app_*'");
  }

  std::int64_t DataVersion() override {
    // The format rides on the poll: a server of an older release still running when a newer one
    // raised it stops taking registry changes (crmd_registry_up 0) and logs why.
    auto rows = c_.Query("SELECT version, format FROM crmd.registry_version");
    postgres::CheckRegistryFormat(rows.Integer(0, 1));
    return rows.Integer(0, 0);
  }

 private:
  // Runs `body` in a transaction that also moves the registry's version: committed when it
  // answers kDone, rolled back otherwise or when it throws.
  template <typename Body>
  RegistryChange Change(Body&& body) {
    c_.Exec("BEGIN");
    try {
      // One registry writer at a time: checks and writes of two CLIs do not interleave.
      c_.Exec("LOCK TABLE crmd.registry_version IN EXCLUSIVE MODE");
      const RegistryChange change = body();
      if (change == RegistryChange::kDone) {
        c_.Exec("UPDATE crmd.registry_version SET version = version + 1");
        c_.Exec("COMMIT");
      } else {
        c_.Exec("ROLLBACK");
      }
      return change;
    } catch (...) {
      if (c_.Healthy() && c_.InTransaction()) c_.Exec("ROLLBACK");
      throw;
    }
  }

  bool Exists(const std::string& app_id) {
    return c_.Query("SELECT 1 FROM crmd.apps WHERE app_id = $1", {app_id}).size() > 0;
  }

  void InsertKey(const std::string& app_id, const ApiKeyRecord& key) {
    // A revoked name may be issued again: the row is reused with the new hash.
    c_.Query("INSERT INTO crmd.api_keys (app_id, name, key_hash, created_at) VALUES ($1, $2, $3, $4) "
             "ON CONFLICT (app_id, name) DO UPDATE SET key_hash = excluded.key_hash, created_at = excluded.created_at, "
             "revoked_at = NULL",
             {app_id, key.name, key.key_hash, key.created_at});
  }

  // `column` is one of this file's fixed names, never input.
  RegistryChange SetColumn(const char* column, const std::string& app_id, const std::string& value) {
    return Change([&] {
      const auto changed =
          c_.Query(std::string("UPDATE crmd.apps SET ") + column + " = $1 WHERE app_id = $2", {value, app_id}).Affected();
      return changed > 0 ? RegistryChange::kDone : RegistryChange::kNoSuchApp;
    });
  }

  Connection c_;
};

}  // namespace

std::unique_ptr<RegistryStore> OpenPostgresRegistry(const std::string& url) { return std::make_unique<PostgresRegistry>(url); }

}  // namespace crmd::storage
