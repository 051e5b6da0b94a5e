// Where the applications' stores are (issue 22's `--store`): each application's Database, opened
// by its id. SQLite files under the data directory are the default; schemas of a PostgreSQL
// database the second kind (`--store`). Thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "storage/database.hpp"
#include "storage/outbox_takeover.hpp"

namespace crmd::storage {

class Stores {
 public:
  virtual ~Stores() = default;
  // Opens (creating if needed) the store of `app_id`, a validated application id.
  virtual std::unique_ptr<Database> Open(const std::string& app_id) = 0;
  // Whether the store of `app_id` holds trigger activations, read without opening it as a store
  // (after a restart, to find the applications with work left). False when it has none or none.
  virtual bool HasOutboxEntries(const std::string& app_id) = 0;
  // The applications that have a store.
  virtual std::vector<std::string> List() = 0;
  // Removes the store of `app_id` and everything in it (what an interrupted `app create` left).
  virtual void Remove(const std::string& app_id) = 0;
  // Writes a consistent copy of the store of `app_id` to the new file `path` while it keeps
  // serving (`crmd backup`: SQLite's VACUUM INTO, one read transaction). Throws StorageError on
  // PostgreSQL, whose backup is pg_dump's (docs/OPERATIONS.md).
  virtual void BackupTo(const std::string& app_id, const std::string& path) = 0;
  // Whether the stores answer: on PostgreSQL a pooled connection runs a query; SQLite's files are
  // this process's and always do. Never throws.
  virtual bool Ready() { return true; }
  // Bytes the store of `app_id` takes on disk, its indexes and logs included; 0 when it has none.
  virtual std::int64_t StoreBytes(const std::string& app_id) = 0;
  // Calls `changed(app_id)` from a thread of its own whenever a process (this one included) may
  // have changed an application's schema, so that every server on one database reloads it;
  // `changed("*")` when changes may have been missed (all of them). Until StopWatching(). SQLite
  // files belong to one process: never called.
  virtual void Watch(std::function<void(const std::string& app_id)> changed) { (void)changed; }
  virtual void StopWatching() {}
  // Issue 36: calls `announced(payload)` from a thread of its own with what each committed write
  // transaction of any process on the database Announce()d (this one's included), in commit order,
  // until StopWatchingRecords(). Announcements made while the listening connection was broken are
  // lost (LiveQuery subscribers miss those events). SQLite: never called.
  virtual void WatchRecords(std::function<void(std::string_view payload)> announced) { (void)announced; }
  virtual void StopWatchingRecords() {}
  // Whether other processes may write to these stores (PostgreSQL).
  virtual bool Shared() const { return false; }
  // The process is short of descriptors: let go of what is only kept for later (idle database
  // connections). SQLite's stores are closed by the application cache instead.
  virtual void Relieve() {}
  // How this process takes over the trigger work of servers on the same database that stopped
  // for good (outbox_takeover.hpp); null when the stores belong to this process alone (SQLite).
  virtual OutboxTakeover* outbox_takeover() { return nullptr; }
};

// SQLite files `<data_dir>/apps/<appId>/data.db`, with up to `readers` idle read connections each.
std::unique_ptr<Stores> SqliteStores(std::string data_dir, Durability durability, int readers);

// Schemas of the PostgreSQL database at `url` (postgres/pg_store.hpp), through one pool of at most
// `connections` connections for every application. `instance` names this server among those on
// the database, the same across its restarts (its trigger runner takes back what it claimed before
// a crash at once); random when empty (the command line). Throws StorageError when it cannot be
// reached.
std::unique_ptr<Stores> PostgresStores(std::string url, std::size_t connections, std::string instance = {});

}  // namespace crmd::storage
