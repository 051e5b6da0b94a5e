#include <fmt/format.h>

#include "storage/newer_format.hpp"
#include "storage/postgres/generations.hpp"
#include "storage/postgres/pg_dialect.hpp"
#include "storage/postgres/pg_outbox_takeover.hpp"
#include "storage/postgres/pg_store.hpp"
#include "storage/stores.hpp"
#include "util/log.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <optional>
#include <thread>

namespace crmd::storage {

namespace postgres {

namespace {

// The advisory lock under which the `crmd` schema is made: two processes starting on a new
// database at once would otherwise race on CREATE ... IF NOT EXISTS.
constexpr const char* kCrmdSchemaLock = "SELECT pg_advisory_xact_lock(7262011)";

// The helper functions of pg_dialect: a JSON value as SQLite's json1 yields it (a number, true and
// false as 1 and 0, text), and the elements of an array (a scalar is its own one element).
// Plain SQL functions, inlined by the planner.
constexpr const char* kHelpers = R"sql(
CREATE OR REPLACE FUNCTION crmd.num(j jsonb) RETURNS double precision LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$$ SELECT CASE jsonb_typeof(j) WHEN 'number' THEN (j #>> '{}')::double precision
                               WHEN 'boolean' THEN CASE WHEN j = 'true'::jsonb THEN 1 ELSE 0 END END $$;
CREATE OR REPLACE FUNCTION crmd.txt(j jsonb) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$$ SELECT CASE jsonb_typeof(j) WHEN 'string' THEN j #>> '{}' WHEN 'object' THEN j::text WHEN 'array' THEN j::text END $$;
CREATE OR REPLACE FUNCTION crmd.elements(j jsonb) RETURNS SETOF jsonb LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$$ SELECT e FROM jsonb_array_elements(CASE jsonb_typeof(j) WHEN 'array' THEN j ELSE jsonb_build_array(j) END) AS e
   WHERE j IS NOT NULL $$;
)sql";

// The registry (registry_store.hpp) and the applications that have a store. `version` changes with
// every registry change, in its transaction: what the servers poll.
constexpr const char* kTables = R"sql(
CREATE TABLE IF NOT EXISTS crmd.stores (app_id text PRIMARY KEY, schema_name text NOT NULL);
CREATE TABLE IF NOT EXISTS crmd.apps (app_id text PRIMARY KEY, name text NOT NULL, master_key_hash text NOT NULL,
  created_at text NOT NULL, region text NOT NULL DEFAULT 'IL', webhook_secret text NOT NULL,
  oauth_secret text NOT NULL, gates text NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS crmd.api_keys (app_id text NOT NULL, name text NOT NULL, key_hash text NOT NULL,
  created_at text NOT NULL, revoked_at text, PRIMARY KEY (app_id, name));
CREATE TABLE IF NOT EXISTS crmd.functions (app_id text NOT NULL, name text NOT NULL, code text NOT NULL,
  deployed_at text NOT NULL, PRIMARY KEY (app_id, name));
CREATE TABLE IF NOT EXISTS crmd.registry_version (one boolean PRIMARY KEY DEFAULT TRUE CHECK (one), version bigint NOT NULL);
INSERT INTO crmd.registry_version (version) VALUES (0) ON CONFLICT DO NOTHING;
ALTER TABLE crmd.apps ADD COLUMN IF NOT EXISTS gates text NOT NULL DEFAULT '';
ALTER TABLE crmd.registry_version ADD COLUMN IF NOT EXISTS format bigint NOT NULL DEFAULT 0;
ALTER TABLE crmd.stores ADD COLUMN IF NOT EXISTS format bigint NOT NULL DEFAULT 0;
)sql";

// The registry's format, or nullopt in a database without the column (no `crmd` schema yet, or
// one made before 0.3.0).
std::optional<std::int64_t> RegistryFormat(Connection& c) {
  if (c.Query("SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass('crmd.registry_version') "
              "AND attname = 'format' AND NOT attisdropped")
          .size() == 0)
    return std::nullopt;
  return c.Query("SELECT format FROM crmd.registry_version").Integer(0, 0);
}

}  // namespace

std::string SchemaOf(const std::string& app_id) { return ShortName("app_" + app_id); }

void CheckRegistryFormat(std::int64_t format) {
  if (format > kRegistryFormat) RefuseNewerFormat("registry", "schema crmd", format, kRegistryFormat);
}

void EnsureCrmdSchema(Connection& c) {
  // The format tells whether anything is to do: a registry of this format has every table and
  // function below (the CLI opens it for every command, each server at its start).
  if (const auto format = RegistryFormat(c)) {
    CheckRegistryFormat(*format);
    if (*format == kRegistryFormat) return;
  }
  c.Exec("BEGIN");
  try {
    c.Exec(kCrmdSchemaLock);
    c.Exec("CREATE SCHEMA IF NOT EXISTS crmd");
    c.Exec(kHelpers);
    c.Exec(kTables);
    c.Exec(kOutboxTakeoverTables);
    // Asked again under the lock: a newer server may have raised it since (this transaction's
    // changes are then rolled back with the refusal).
    CheckRegistryFormat(RegistryFormat(c).value_or(0));
    c.Exec("UPDATE crmd.registry_version SET format = " + std::to_string(kRegistryFormat));
    c.Exec("COMMIT");
  } catch (...) {
    if (c.Healthy()) c.Exec("ROLLBACK");
    throw;
  }
}

}  // namespace postgres

namespace {

class PostgresSchemas final : public Stores {
 public:
  PostgresSchemas(std::string url, std::size_t connections, std::string instance)
      : pool_(std::make_shared<postgres::Pool>(std::move(url), connections, std::move(instance))),
        takeover_(std::make_shared<postgres::PgOutboxTakeover>(pool_)) {
    auto c = pool_->Acquire(false);
    postgres::EnsureCrmdSchema(*c);
  }

  // A new store is made, an older one brought up to date (crmd's own tables; the records' layout
  // has not changed since ae6c27d) and marked, a newer one refused, in the query that finds it.
  std::unique_ptr<Database> Open(const std::string& app_id) override {
    const std::string schema = postgres::SchemaOf(app_id), quoted = postgres::QuoteName(schema);
    {
      auto c = pool_->Acquire(false);
      if (StoreFormat(*c, app_id, schema) != postgres::kStoreFormat) {
        c->Exec("BEGIN");
        try {
          c->Query("SELECT pg_advisory_xact_lock(hashtext($1))", {schema});
          StoreFormat(*c, app_id, schema);  // a newer server may have raised it meanwhile
          c->Exec("CREATE SCHEMA IF NOT EXISTS " + quoted);
          c->Exec(fmt::format("CREATE TABLE IF NOT EXISTS {}._crmd_schema (\"className\" text PRIMARY KEY, "
                              "definition text NOT NULL)",
                              quoted));
          c->Exec(fmt::format("CREATE TABLE IF NOT EXISTS {}._crmd_outbox (id bigserial PRIMARY KEY, lane int NOT NULL, "
                              "payload text NOT NULL, claimed_by text, claimed_until timestamptz)",
                              quoted));
          c->Exec(postgres::CreateGenerations(postgres::PgDialect(quoted)));
          c->Query("INSERT INTO crmd.stores (app_id, schema_name, format) VALUES ($1, $2, $3) "
                   "ON CONFLICT (app_id) DO UPDATE SET format = excluded.format",
                   {app_id, schema, std::to_string(postgres::kStoreFormat)});
          c->Exec("COMMIT");
        } catch (...) {
          if (c->Healthy() && c->InTransaction()) c->Exec("ROLLBACK");
          throw;
        }
      }
    }
    return postgres::OpenPostgres(pool_, takeover_, app_id, schema);
  }

  bool HasOutboxEntries(const std::string& app_id) override {
    auto c = pool_->Acquire(false);
    if (c->Query("SELECT 1 FROM crmd.stores WHERE app_id = $1", {app_id}).size() == 0) return false;
    return c->Query(fmt::format("SELECT 1 FROM {}._crmd_outbox LIMIT 1", postgres::QuoteName(postgres::SchemaOf(app_id))))
               .size() > 0;
  }

  std::vector<std::string> List() override {
    auto c = pool_->Acquire(false);
    auto rows = c->Query("SELECT app_id FROM crmd.stores ORDER BY app_id");
    std::vector<std::string> ids;
    for (int r = 0; r < rows.size(); ++r) ids.emplace_back(*rows.Value(r, 0));
    return ids;
  }

  ~PostgresSchemas() override {
    StopWatching();
    StopWatchingRecords();
    if (records_wake_ >= 0) ::close(records_wake_);
    if (wake_ >= 0) ::close(wake_);
  }

  void Watch(std::function<void(const std::string&)> changed) override {
    StopWatching();
    std::uint64_t drained = 0;
    while (::read(wake_, &drained, sizeof drained) > 0) {
    }
    stop_ = false;
    watcher_ = std::thread([this, changed = std::move(changed)] {
      Listen(postgres::kSchemaChannel, stop_, wake_, [&](std::string_view app_id) { changed(std::string(app_id)); },
             [&] { changed("*"); });
    });
  }

  // Wakes the listener from its wait: every command of the CLI opens the registry, and its exit
  // waited out the listener's 200 ms poll (a fifth of a second per command on PostgreSQL).
  void StopWatching() override {
    stop_ = true;
    const std::uint64_t one = 1;
    if (watcher_.joinable()) {
      if (::write(wake_, &one, sizeof one) < 0) log::Warn("could not wake the schema listener", {{"errno", errno}});
      watcher_.join();
    }
  }

  void WatchRecords(std::function<void(std::string_view)> announced) override {
    StopWatchingRecords();
    std::uint64_t drained = 0;
    while (::read(records_wake_, &drained, sizeof drained) > 0) {
    }
    records_stop_ = false;
    records_watcher_ = std::thread([this, announced = std::move(announced)] {
      Listen(postgres::kRecordsChannel, records_stop_, records_wake_, announced, [] {});
    });
  }

  void StopWatchingRecords() override {
    records_stop_ = true;
    const std::uint64_t one = 1;
    if (records_watcher_.joinable()) {
      if (::write(records_wake_, &one, sizeof one) < 0) log::Warn("could not wake the records listener", {{"errno", errno}});
      records_watcher_.join();
    }
  }

  bool Shared() const override { return true; }

  void Relieve() override { pool_->DropIdle(); }

  OutboxTakeover* outbox_takeover() override { return takeover_.get(); }

  void BackupTo(const std::string&, const std::string&) override {
    throw StorageError("crmd backup copies SQLite stores; on PostgreSQL use pg_dump --schema=crmd --schema='app_*' (docs/OPERATIONS.md)");
  }

  bool Ready() override {
    try {
      auto c = pool_->Acquire(false);
      c->Query("SELECT 1");
      return true;
    } catch (const std::exception&) {
      return false;
    }
  }

  std::int64_t StoreBytes(const std::string& app_id) override {
    auto c = pool_->Acquire(false);
    // pg_total_relation_size counts a table's indexes and TOAST too.
    auto rows = c->Query(
        "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = $1 AND c.relkind IN ('r', 'm')",
        {postgres::SchemaOf(app_id)});
    return std::stoll(std::string(rows.Value(0, 0).value_or("0")));
  }

  void Remove(const std::string& app_id) override {
    auto c = pool_->Acquire(false);
    c->Exec("BEGIN");
    try {
      c->Exec("DROP SCHEMA IF EXISTS " + postgres::QuoteName(postgres::SchemaOf(app_id)) + " CASCADE");
      c->Query("DELETE FROM crmd.stores WHERE app_id = $1", {app_id});
      postgres::PgOutboxTakeover::Forget(*c, app_id);
      c->Exec("COMMIT");
    } catch (...) {
      if (c->Healthy() && c->InTransaction()) c->Exec("ROLLBACK");
      throw;
    }
  }

 private:
  // The format of `app_id`'s store (0 when it has none yet); a newer one is refused.
  static std::int64_t StoreFormat(postgres::Connection& c, const std::string& app_id, const std::string& schema) {
    const auto rows = c.Query("SELECT format FROM crmd.stores WHERE app_id = $1", {app_id});
    const std::int64_t format = rows.size() > 0 ? rows.Integer(0, 0) : 0;
    if (format > postgres::kStoreFormat) RefuseNewerFormat("store", "schema " + schema, format, postgres::kStoreFormat);
    return format;
  }

  // One connection of its own LISTENs on `channel`; when it breaks (a restart of the server),
  // notifications may have been missed while it was down: `missed` runs once it listens again
  // (the schema listener then reloads every application).
  void Listen(const char* channel, const std::atomic<bool>& stop, int wake, const std::function<void(std::string_view)>& received,
              const std::function<void()>& missed_some) {
    bool missed = false;
    while (!stop) {
      try {
        postgres::Connection c(pool_->conninfo());
        c.Exec(std::string("LISTEN ") + channel);
        if (missed) missed_some();
        missed = false;
        while (!stop) c.AwaitNotifications(1000, received, wake);
      } catch (const std::exception& e) {
        if (!missed) log::Warn("listening for notifications failed", {{"channel", channel}, {"error", e.what()}});
        missed = true;
        pollfd woken{wake, POLLIN, 0};
        if (!stop) ::poll(&woken, 1, 1000);  // a second before trying again, unless stopped
      }
    }
  }

  std::shared_ptr<postgres::Pool> pool_;
  std::shared_ptr<postgres::PgOutboxTakeover> takeover_;
  std::atomic<bool> stop_{false};
  int wake_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);  // written by StopWatching
  std::thread watcher_;
  std::atomic<bool> records_stop_{false};
  int records_wake_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);  // written by StopWatchingRecords
  std::thread records_watcher_;
};

}  // namespace

std::unique_ptr<Stores> PostgresStores(std::string url, std::size_t connections, std::string instance) {
  return std::make_unique<PostgresSchemas>(std::move(url), connections, std::move(instance));
}

}  // namespace crmd::storage
