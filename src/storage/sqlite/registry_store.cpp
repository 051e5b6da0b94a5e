#include "storage/registry_store.hpp"

#include <sodium.h>

#include <stdexcept>

#include "storage/database.hpp"
#include "storage/sqlite/connection.hpp"

namespace crmd::storage {

namespace {

class SqliteRegistry final : public RegistryStore {
 public:
  explicit SqliteRegistry(const std::string& path);
  RegistryChange CreateApp(const AppRecord& app) override;
  RegistryChange AddApiKey(const std::string& app_id, const ApiKeyRecord& key) override;
  RegistryChange RevokeApiKey(const std::string& app_id, const std::string& name,
                              const std::string& revoked_at) override;
  RegistryChange SetRegion(const std::string& app_id, const std::string& region) override;
  RegistryChange SetWebhookSecret(const std::string& app_id, const std::string& secret) override;
  RegistryChange SetOAuthSecret(const std::string& app_id, const std::string& secret) override;
  RegistryChange SetGates(const std::string& app_id, const std::string& gates) override;
  RegistryChange SetName(const std::string& app_id, const std::string& name) override;
  RegistryChange SetMasterKeyHash(const std::string& app_id, const std::string& hash) override;
  RegistryChange RemoveApp(const std::string& app_id) override;
  RegistryChange DeployFunction(const std::string& app_id, const FunctionRecord& function) override;
  RegistryChange RemoveFunction(const std::string& app_id, const std::string& name) override;
  std::vector<AppRecord> LoadAll() override;
  std::int64_t DataVersion() override;
  void BackupTo(const std::string& path) override {
    auto st = impl_->c.Prepare("VACUUM INTO ?");
    st.Bind(1, path);
    st.Step();
  }

 private:
  struct Impl {
    explicit Impl(const std::string& path) : c(path, /*sync_full=*/true) {}
    sqlite::Connection c;
  };
  std::unique_ptr<Impl> impl_;
};

// The layout of the registry this release writes (issue 35), in its user_version: the data
// directory's format. 0: every registry before 0.3.0, brought up to date above as it opens.
constexpr std::int64_t kRegistryFormat = 1;

// 256 bits: as strong as the HMAC-SHA256 it keys.
constexpr std::size_t kWebhookSecretBytes = 32;

// Runs `body` in an immediate transaction: committed when it answers kDone, rolled back
// otherwise or when it throws.
template <typename Body>
RegistryChange InTransaction(sqlite::Connection& c, Body&& body) {
  c.Exec("BEGIN IMMEDIATE");
  try {
    RegistryChange change = body();
    c.Exec(change == RegistryChange::kDone ? "COMMIT" : "ROLLBACK");
    return change;
  } catch (...) {
    c.Exec("ROLLBACK");
    throw;
  }
}

bool AppExists(sqlite::Connection& c, const std::string& app_id) {
  auto st = c.Prepare("SELECT 1 FROM apps WHERE app_id = ?");
  st.Bind(1, app_id);
  return st.Step();
}

void InsertKey(sqlite::Connection& c, const std::string& app_id, const ApiKeyRecord& key) {
  // A revoked name may be issued again: the row is reused with the new hash.
  auto st = c.Prepare(
      "INSERT INTO api_keys (app_id, name, key_hash, created_at) VALUES (?, ?, ?, ?) "
      "ON CONFLICT (app_id, name) DO UPDATE SET key_hash = excluded.key_hash, "
      "created_at = excluded.created_at, revoked_at = NULL");
  st.Bind(1, app_id);
  st.Bind(2, key.name);
  st.Bind(3, key.key_hash);
  st.Bind(4, key.created_at);
  st.Step();
}

// The per-application secret columns (fixed names, never input).
constexpr const char* kSecretColumns[] = {"webhook_secret", "oauth_secret"};

bool HasColumn(sqlite::Connection& c, const std::string& column) {
  auto st = c.Prepare("SELECT 1 FROM pragma_table_info('apps') WHERE name = ?");
  st.Bind(1, column);
  return st.Step();
}

bool AnyAppWithout(sqlite::Connection& c, const std::string& column) {
  auto st = c.Prepare("SELECT 1 FROM apps WHERE " + column + " = '' LIMIT 1");
  return st.Step();
}

// A registry of an earlier release: the column is added and every application draws its own
// secret (a shared default would let one tenant sign for another). Looked at before the write
// lock is taken, since the server opens the registry on every reload and nearly always finds
// nothing to do; looked at again under the lock, since the CLI and the server may both open an
// old registry at once.
void GiveSecrets(sqlite::Connection& c, const std::string& column) {
  if (HasColumn(c, column) && !AnyAppWithout(c, column)) return;
  InTransaction(c, [&] {
    if (!HasColumn(c, column)) c.Exec("ALTER TABLE apps ADD COLUMN " + column + " TEXT NOT NULL DEFAULT ''");
    std::vector<std::string> app_ids;
    {
      auto st = c.Prepare("SELECT app_id FROM apps WHERE " + column + " = ''");
      while (st.Step()) app_ids.push_back(st.ColumnText(0));
    }
    for (const auto& app_id : app_ids) {
      auto st = c.Prepare("UPDATE apps SET " + column + " = ? WHERE app_id = ?");
      st.Bind(1, NewWebhookSecret());
      st.Bind(2, app_id);
      st.Step();
    }
    return RegistryChange::kDone;
  });
}

// Sets one column of an application's row (a fixed name, never input).
RegistryChange SetColumn(sqlite::Connection& c, const std::string& column, const std::string& app_id, const std::string& value) {
  return InTransaction(c, [&] {
    if (!AppExists(c, app_id)) return RegistryChange::kNoSuchApp;
    auto st = c.Prepare("UPDATE apps SET " + column + " = ? WHERE app_id = ?");
    st.Bind(1, value);
    st.Bind(2, app_id);
    st.Step();
    return RegistryChange::kDone;
  });
}

RegistryChange SetSecret(sqlite::Connection& c, const std::string& column, const std::string& app_id, const std::string& secret) {
  if (secret.empty()) throw std::invalid_argument("an application's secret may not be empty");
  return SetColumn(c, column, app_id, secret);
}

}  // namespace

std::string NewWebhookSecret() {
  if (sodium_init() < 0) throw std::runtime_error("libsodium failed to initialise");
  unsigned char bytes[kWebhookSecretBytes];
  randombytes_buf(bytes, sizeof bytes);
  char hex[kWebhookSecretBytes * 2 + 1];
  sodium_bin2hex(hex, sizeof hex, bytes, sizeof bytes);
  sodium_memzero(bytes, sizeof bytes);
  return hex;
}

SqliteRegistry::SqliteRegistry(const std::string& path) : impl_(std::make_unique<Impl>(path)) {
  impl_->c.Exec(
      "CREATE TABLE IF NOT EXISTS apps (app_id TEXT PRIMARY KEY NOT NULL, name TEXT NOT NULL, "
      "master_key_hash TEXT NOT NULL, created_at TEXT NOT NULL, region TEXT NOT NULL DEFAULT 'IL', "
      "webhook_secret TEXT NOT NULL DEFAULT '', oauth_secret TEXT NOT NULL DEFAULT '', gates TEXT NOT NULL DEFAULT '')");
  // A registry of an earlier release: its applications get the default region.
  bool has_region = false;
  {
    auto st = impl_->c.Prepare("SELECT 1 FROM pragma_table_info('apps') WHERE name = 'region'");
    has_region = st.Step();
  }
  if (!has_region) impl_->c.Exec("ALTER TABLE apps ADD COLUMN region TEXT NOT NULL DEFAULT 'IL'");
  // One of an earlier release: its applications keep the spec's gates.
  if (!HasColumn(impl_->c, "gates")) impl_->c.Exec("ALTER TABLE apps ADD COLUMN gates TEXT NOT NULL DEFAULT ''");
  impl_->c.Exec(
      "CREATE TABLE IF NOT EXISTS functions (app_id TEXT NOT NULL, name TEXT NOT NULL, code TEXT NOT NULL, "
      "deployed_at TEXT NOT NULL, PRIMARY KEY (app_id, name))");
  impl_->c.Exec(
      "CREATE TABLE IF NOT EXISTS api_keys (app_id TEXT NOT NULL, name TEXT NOT NULL, "
      "key_hash TEXT NOT NULL, created_at TEXT NOT NULL, revoked_at TEXT, "
      "PRIMARY KEY (app_id, name))");
  for (const char* column : kSecretColumns) GiveSecrets(impl_->c, column);
  sqlite::CheckFormat(impl_->c, path, kRegistryFormat, "registry");
}

RegistryChange SqliteRegistry::CreateApp(const AppRecord& app) {
  auto& c = impl_->c;
  return InTransaction(c, [&] {
    if (AppExists(c, app.app_id)) return RegistryChange::kAlreadyExists;
    auto st = c.Prepare(
        "INSERT INTO apps (app_id, name, master_key_hash, created_at, region, webhook_secret, oauth_secret, gates) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
    st.Bind(1, app.app_id);
    st.Bind(2, app.name);
    st.Bind(3, app.master_key_hash);
    st.Bind(4, app.created_at);
    st.Bind(5, app.region);
    st.Bind(6, app.webhook_secret.empty() ? NewWebhookSecret() : app.webhook_secret);
    st.Bind(7, app.oauth_secret.empty() ? NewWebhookSecret() : app.oauth_secret);
    st.Bind(8, app.gates);
    st.Step();
    for (const auto& key : app.api_keys) InsertKey(c, app.app_id, key);
    return RegistryChange::kDone;
  });
}

RegistryChange SqliteRegistry::AddApiKey(const std::string& app_id, const ApiKeyRecord& key) {
  auto& c = impl_->c;
  return InTransaction(c, [&] {
    if (!AppExists(c, app_id)) return RegistryChange::kNoSuchApp;
    auto st = c.Prepare("SELECT revoked_at FROM api_keys WHERE app_id = ? AND name = ?");
    st.Bind(1, app_id);
    st.Bind(2, key.name);
    if (st.Step() && st.ColumnIsNull(0)) return RegistryChange::kAlreadyExists;
    InsertKey(c, app_id, key);
    return RegistryChange::kDone;
  });
}

RegistryChange SqliteRegistry::RevokeApiKey(const std::string& app_id, const std::string& name,
                                           const std::string& revoked_at) {
  auto st = impl_->c.Prepare(
      "UPDATE api_keys SET revoked_at = ? WHERE app_id = ? AND name = ? AND revoked_at IS NULL "
      "RETURNING name");
  st.Bind(1, revoked_at);
  st.Bind(2, app_id);
  st.Bind(3, name);
  bool changed = st.Step();
  while (st.Step()) {
  }
  return changed ? RegistryChange::kDone : RegistryChange::kNoSuchKey;
}

RegistryChange SqliteRegistry::SetRegion(const std::string& app_id, const std::string& region) {
  return SetColumn(impl_->c, "region", app_id, region);
}

RegistryChange SqliteRegistry::SetWebhookSecret(const std::string& app_id, const std::string& secret) {
  return SetSecret(impl_->c, "webhook_secret", app_id, secret);
}

RegistryChange SqliteRegistry::SetOAuthSecret(const std::string& app_id, const std::string& secret) {
  return SetSecret(impl_->c, "oauth_secret", app_id, secret);
}

RegistryChange SqliteRegistry::SetGates(const std::string& app_id, const std::string& gates) {
  return SetColumn(impl_->c, "gates", app_id, gates);
}

RegistryChange SqliteRegistry::SetName(const std::string& app_id, const std::string& name) {
  return SetColumn(impl_->c, "name", app_id, name);
}

RegistryChange SqliteRegistry::SetMasterKeyHash(const std::string& app_id, const std::string& hash) {
  if (hash.empty()) throw std::invalid_argument("a master key hash may not be empty");
  return SetColumn(impl_->c, "master_key_hash", app_id, hash);
}

RegistryChange SqliteRegistry::RemoveApp(const std::string& app_id) {
  auto& c = impl_->c;
  return InTransaction(c, [&] {
    if (!AppExists(c, app_id)) return RegistryChange::kNoSuchApp;
    for (const char* table : {"api_keys", "functions", "apps"}) {
      auto st = c.Prepare(std::string("DELETE FROM ") + table + " WHERE app_id = ?");
      st.Bind(1, app_id);
      st.Step();
    }
    return RegistryChange::kDone;
  });
}

RegistryChange SqliteRegistry::DeployFunction(const std::string& app_id, const FunctionRecord& function) {
  auto& c = impl_->c;
  return InTransaction(c, [&] {
    if (!AppExists(c, app_id)) return RegistryChange::kNoSuchApp;
    auto st = c.Prepare(
        "INSERT INTO functions (app_id, name, code, deployed_at) VALUES (?, ?, ?, ?) "
        "ON CONFLICT (app_id, name) DO UPDATE SET code = excluded.code, deployed_at = excluded.deployed_at");
    st.Bind(1, app_id);
    st.Bind(2, function.name);
    st.Bind(3, function.code);
    st.Bind(4, function.deployed_at);
    st.Step();
    return RegistryChange::kDone;
  });
}

RegistryChange SqliteRegistry::RemoveFunction(const std::string& app_id, const std::string& name) {
  auto& c = impl_->c;
  return InTransaction(c, [&] {
    if (!AppExists(c, app_id)) return RegistryChange::kNoSuchApp;
    auto st = c.Prepare("DELETE FROM functions WHERE app_id = ? AND name = ? RETURNING name");
    st.Bind(1, app_id);
    st.Bind(2, name);
    bool removed = st.Step();
    while (st.Step()) {
    }
    return removed ? RegistryChange::kDone : RegistryChange::kNoSuchKey;
  });
}

std::vector<AppRecord> SqliteRegistry::LoadAll() {
  std::vector<AppRecord> apps;
  {
    auto st = impl_->c.Prepare(
        "SELECT app_id, name, master_key_hash, created_at, region, webhook_secret, oauth_secret, gates FROM apps "
        "ORDER BY app_id");
    while (st.Step()) {
      AppRecord app;
      app.app_id = st.ColumnText(0);
      app.name = st.ColumnText(1);
      app.master_key_hash = st.ColumnText(2);
      app.created_at = st.ColumnText(3);
      app.region = st.ColumnText(4);
      app.webhook_secret = st.ColumnText(5);
      app.oauth_secret = st.ColumnText(6);
      app.gates = st.ColumnText(7);
      apps.push_back(std::move(app));
    }
  }
  auto st = impl_->c.Prepare(
      "SELECT app_id, name, key_hash, created_at, revoked_at FROM api_keys ORDER BY app_id, name");
  std::size_t i = 0;
  while (st.Step()) {
    std::string app_id = st.ColumnText(0);
    while (i < apps.size() && apps[i].app_id < app_id) ++i;
    if (i == apps.size() || apps[i].app_id != app_id) continue;
    ApiKeyRecord key{st.ColumnText(1), st.ColumnText(2), st.ColumnText(3), std::nullopt};
    if (!st.ColumnIsNull(4)) key.revoked_at = st.ColumnText(4);
    apps[i].api_keys.push_back(std::move(key));
  }
  auto fn = impl_->c.Prepare("SELECT app_id, name, code, deployed_at FROM functions ORDER BY app_id, name");
  i = 0;
  while (fn.Step()) {
    std::string app_id = fn.ColumnText(0);
    while (i < apps.size() && apps[i].app_id < app_id) ++i;
    if (i == apps.size() || apps[i].app_id != app_id) continue;
    apps[i].functions.push_back({fn.ColumnText(1), fn.ColumnText(2), fn.ColumnText(3)});
  }
  return apps;
}

std::int64_t SqliteRegistry::DataVersion() {
  auto st = impl_->c.Prepare("PRAGMA data_version");
  st.Step();
  return std::get<std::int64_t>(st.Column(0));
}

std::unique_ptr<RegistryStore> OpenSqliteRegistry(const std::string& path) { return std::make_unique<SqliteRegistry>(path); }

}  // namespace crmd::storage
