// One SQLite connection with its cache of prepared statements.
// Not thread-safe: a connection is used by one thread at a time (the pool or the writer lock
// in sqlite_database.cpp guarantees it).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "storage/row.hpp"

namespace crmd::storage::sqlite {

// A prepared statement borrowed from a connection's cache; reset and unbound when it goes out of
// scope, so the next user finds it clean.
class Statement {
 public:
  // `in_use` counts the connection's live statements; `owned` ones are finalized, not returned.
  Statement(sqlite3_stmt* stmt, int* in_use, bool owned) : stmt_(stmt), in_use_(in_use), owned_(owned) {
    ++*in_use_;
  }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  void BindCell(int index, const Cell& cell);
  // Binds `cells` to placeholders 1, 2, ...: the parameters of a compiled where, in order.
  void BindAll(const std::vector<Cell>& cells);
  void Bind(int index, std::string_view text);
  // As BindCell and Bind, but SQLite reads the text in place instead of copying it: it must
  // outlive this Statement (which unbinds it), not just the call.
  void BindCellInPlace(int index, const Cell& cell);
  void BindInPlace(int index, std::string_view text);
  void BindNull(int index);
  // True while a row is available; throws StorageError on failure.
  bool Step();
  // Ready to run again with new bindings (the destructor does this too).
  void Reset();
  Cell Column(int index) const;
  int ColumnType(int index) const;  // SQLITE_NULL, SQLITE_INTEGER, ...: the stored type
  int ColumnCount() const;
  std::string_view ColumnName(int index) const;
  std::string ColumnText(int index) const;
  // The text of a column, valid until the next Step or Reset.
  std::string_view ColumnView(int index) const;
  bool ColumnIsNull(int index) const;
  // Whether the statement sorted since the last call (SQLite's SQLITE_STMTSTATUS_SORT, then reset):
  // after a first Step, it tells an index scan in order from a scan into SQLite's sorter.
  bool TakeSorted();
  // Virtual machine steps since the last call (SQLITE_STMTSTATUS_VM_STEP, then reset): the work a
  // statement did, rows it skipped inside SQLite included.
  std::int64_t TakeVmSteps();

 private:
  sqlite3_stmt* stmt_;
  int* in_use_;
  bool owned_;
};

class Connection {
 public:
  Connection(const std::string& path, bool sync_full);
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection();

  // A cached statement for `sql`. SQL text is the cache key, so callers build it deterministically.
  Statement Prepare(const std::string& sql);
  // The same statement found by `key`, a name of its SQL that is cheaper to build than the text (a
  // write's table and columns), the text made by `sql()` only the first time. One key, one text.
  template <typename MakeSql>
  Statement PrepareByKey(const std::string& key, MakeSql&& sql) {
    if (auto it = by_key_.find(key); it != by_key_.end()) return Statement(it->second, &in_use_, /*owned=*/false);
    return PrepareKeyed(key, sql());
  }
  // Runs statements that return no rows (DDL, BEGIN, COMMIT).
  void Exec(const std::string& sql);
  // Runs one statement that returns no rows through the statement cache: for the ones every write
  // repeats (BEGIN, SAVEPOINT, RELEASE, COMMIT), which Exec would parse again each time.
  void Run(const std::string& sql);
  // False in autocommit mode: no transaction open, or SQLite rolled the open one back on an error
  // (SQLITE_FULL, an I/O error, out of memory).
  bool InTransaction() const { return sqlite3_get_autocommit(db_) == 0; }
  // Rows the last INSERT, UPDATE or DELETE on this connection changed.
  std::int64_t Changes() const { return sqlite3_changes64(db_); }
  // Whether SQLite's plan for `sql` sorts (its program opens a sorter), asked once per SQL text and
  // remembered with the statement cache.
  bool PlanSorts(const std::string& sql);

  // Whether the main database has a table (not a view) of this name, from the schema SQLite parsed:
  // no statement, so no read of sqlite_schema. Throws StorageError when the schema cannot be read.
  bool HasTable(const std::string& name);

  // Makes reads on this connection stop (ReadTimedOut) once their thread's ReadDeadline passed.
  void BoundReads();

  // Throws OutOfDescriptors when a file of this connection was opened read-only (SQLite does so
  // when opening it for writing failed): a writer must find out as it opens, not at its first write.
  void CheckWritable();

  // Sets the page cache to `kib` KiB when it is not that already.
  void FitCache(int kib);

  // Calls `hook` with the log's size in pages after each commit on this connection. It replaces
  // SQLite's automatic checkpoint (both are SQLite's WAL hook); must not throw.
  void OnCommit(std::function<void(int frames)> hook);
  // A PASSIVE checkpoint: copies the log pages no reader still needs into the database file
  // without waiting for anyone. Returns the pages of the log copied so far; nothing when another
  // checkpoint was running or the connection is busy; throws StorageError on failure.
  std::optional<int> Checkpoint();
  // Syncs the database file (not the log) to disk: what a checkpoint copied into it, flushed by
  // the caller's thread rather than by whichever checkpoint next reaches the log's end.
  void SyncDatabaseFile();

 private:
  static int WalHook(void* self, sqlite3* db, const char* schema, int frames) noexcept;
  Statement PrepareKeyed(const std::string& key, const std::string& sql);

  sqlite3* db_ = nullptr;
  int cache_kib_ = 0;  // as FitCache set it; 0: SQLite's default
  std::function<void(int)> on_commit_;
  std::unordered_map<std::string, sqlite3_stmt*> cache_;
  std::unordered_map<std::string, sqlite3_stmt*> by_key_;  // statements of cache_ by PrepareByKey's key
  std::unordered_map<std::string, bool> sorts_;
  int in_use_ = 0;  // Statements lent out and not yet destroyed
};

// One snapshot for the several statements of a read on a connection in autocommit mode (BEGIN ...
// COMMIT); inside a write's transaction, that transaction is the snapshot already.
class ReadSnapshot {
 public:
  explicit ReadSnapshot(Connection& c);
  ReadSnapshot(const ReadSnapshot&) = delete;
  ReadSnapshot& operator=(const ReadSnapshot&) = delete;
  // A read transaction has nothing to keep, so ending it never throws; a connection left in one
  // (the COMMIT failed) is not lent again by the reader pool.
  ~ReadSnapshot();

 private:
  Connection& c_;
  bool own_;
};

// `"name"` with inner quotes doubled. Names are validated before they get here; this is the
// second door.
std::string Quote(std::string_view identifier);
// The same appended to `out`: for statements of many names, built on every write.
void AppendQuoted(std::string_view identifier, std::string& out);

// Issue 35: the format `path` (a store or the registry, `what`) is in, SQLite's user_version.
// Newer than `current`: throws StorageError naming both, for the person running an older crmd on
// newer data. Older: marks it `current` (the caller has brought it up to date, or is about to at
// every open). Not thread-safe: the connection's.
void CheckFormat(Connection& c, const std::string& path, std::int64_t current, const char* what);

}  // namespace crmd::storage::sqlite
