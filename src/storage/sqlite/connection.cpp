#include "storage/sqlite/connection.hpp"

#include <cerrno>
#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "storage/database.hpp"
#include "storage/newer_format.hpp"
#include "storage/sqlite/coalescing_vfs.hpp"
#include "storage/sqlite/phone_key.hpp"
#include "storage/sqlite/geo_functions.hpp"
#include "storage/sqlite/regexp.hpp"

namespace crmd::storage::sqlite {

namespace {
// How long a connection waits for a lock held by another process (the CLI writing the registry,
// a checkpoint) before reporting a fault.
constexpr int kBusyTimeoutMs = 5000;
// Prepared statements kept per connection before the cache is emptied.
constexpr std::size_t kMaxCachedStatements = 512;

// Whether SQLite's last error on `db` came from the process or system running out of descriptors.
// Also SQLITE_READONLY: crmd opens every store for writing, and SQLite opens a file read-only when
// opening it for writing failed, out of descriptors too (a descriptor freed in between).
bool OutOfFiles(sqlite3* db) {
  const int e = db ? sqlite3_system_errno(db) : 0;
  return e == EMFILE || e == ENFILE || (db && sqlite3_errcode(db) == SQLITE_READONLY);
}

[[noreturn]] void Throw(sqlite3* db, std::string message) {
  if (OutOfFiles(db)) throw OutOfDescriptors(std::move(message));
  // The read deadline's progress handler interrupts prepares too (reading the schema runs SQLite's
  // machine): that is a slow read to move off the network thread or time out, not a fault.
  if (db && sqlite3_errcode(db) == SQLITE_INTERRUPT && ReadDeadline::Passed())
    throw ReadTimedOut("sqlite: the read ran past its deadline");
  throw StorageError(std::move(message));
}

[[noreturn]] void Fail(sqlite3* db, std::string_view what) {
  Throw(db, fmt::format("sqlite: {}: {}", what, db ? sqlite3_errmsg(db) : "no connection"));
}
}  // namespace

Statement::~Statement() {
  --*in_use_;
  if (owned_) {
    sqlite3_finalize(stmt_);
    return;
  }
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

namespace {

int BindCellAs(sqlite3_stmt* stmt, int index, const Cell& cell, sqlite3_destructor_type text) {
  if (std::holds_alternative<std::monostate>(cell)) return sqlite3_bind_null(stmt, index);
  if (const auto* i = std::get_if<std::int64_t>(&cell)) return sqlite3_bind_int64(stmt, index, *i);
  if (const auto* d = std::get_if<double>(&cell)) return sqlite3_bind_double(stmt, index, *d);
  const auto& s = std::get<std::string>(cell);
  return sqlite3_bind_text(stmt, index, s.data(), static_cast<int>(s.size()), text);
}

}  // namespace

void Statement::BindCell(int index, const Cell& cell) {
  if (BindCellAs(stmt_, index, cell, SQLITE_TRANSIENT) != SQLITE_OK) Fail(sqlite3_db_handle(stmt_), "bind");
}

void Statement::BindCellInPlace(int index, const Cell& cell) {
  if (BindCellAs(stmt_, index, cell, SQLITE_STATIC) != SQLITE_OK) Fail(sqlite3_db_handle(stmt_), "bind");
}

void Statement::BindAll(const std::vector<Cell>& cells) {
  for (std::size_t i = 0; i < cells.size(); ++i) BindCell(static_cast<int>(i) + 1, cells[i]);
}

void Statement::Bind(int index, std::string_view text) {
  if (sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT) !=
      SQLITE_OK)
    Fail(sqlite3_db_handle(stmt_), "bind");
}

void Statement::BindInPlace(int index, std::string_view text) {
  if (sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()), SQLITE_STATIC) != SQLITE_OK)
    Fail(sqlite3_db_handle(stmt_), "bind");
}

void Statement::BindNull(int index) { sqlite3_bind_null(stmt_, index); }

void Statement::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

bool Statement::Step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  if (rc == SQLITE_CONSTRAINT_PRIMARYKEY)  // extended codes are on for every connection
    throw DuplicateKeyError(fmt::format("sqlite: step: {}", sqlite3_errmsg(sqlite3_db_handle(stmt_))));
  if (rc == SQLITE_INTERRUPT && ReadDeadline::Passed()) throw ReadTimedOut("sqlite: the read ran past its deadline");
  Fail(sqlite3_db_handle(stmt_), "step");
}

int Statement::ColumnType(int index) const { return sqlite3_column_type(stmt_, index); }

Cell Statement::Column(int index) const {
  switch (sqlite3_column_type(stmt_, index)) {
    case SQLITE_NULL: return std::monostate{};
    case SQLITE_INTEGER: return static_cast<std::int64_t>(sqlite3_column_int64(stmt_, index));
    case SQLITE_FLOAT: return sqlite3_column_double(stmt_, index);
    default: return ColumnText(index);
  }
}

std::string_view Statement::ColumnView(int index) const {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, index));
  if (!p) return {};
  return {p, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, index))};
}

std::string Statement::ColumnText(int index) const {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, index));
  if (!p) return {};
  return std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, index)));
}

int Statement::ColumnCount() const { return sqlite3_column_count(stmt_); }

std::string_view Statement::ColumnName(int index) const {
  const char* name = sqlite3_column_name(stmt_, index);
  return name ? std::string_view(name) : std::string_view();
}

bool Statement::ColumnIsNull(int index) const {
  return sqlite3_column_type(stmt_, index) == SQLITE_NULL;
}

bool Statement::TakeSorted() { return sqlite3_stmt_status(stmt_, SQLITE_STMTSTATUS_SORT, /*reset=*/1) > 0; }

std::int64_t Statement::TakeVmSteps() { return sqlite3_stmt_status(stmt_, SQLITE_STMTSTATUS_VM_STEP, /*reset=*/1); }

Connection::Connection(const std::string& path, bool sync_full) {
  // Before SQLite initialises (the first open): no global mutex around each of its allocations to
  // keep memory statistics nothing reads.
  static const bool configured = sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0) == SQLITE_OK;
  (void)configured;
  // NOMUTEX: one thread at a time by construction.
  const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
  // One write per commit to the log instead of two per page; correct only with synchronous=FULL.
  const char* vfs = sync_full ? CoalescingVfsName() : nullptr;
  if (sqlite3_open_v2(path.c_str(), &db_, flags, vfs) != SQLITE_OK) {
    std::string message = fmt::format("sqlite: open {}: {}", path, db_ ? sqlite3_errmsg(db_) : "out of memory");
    const bool out_of_files = OutOfFiles(db_);
    sqlite3_close(db_);
    db_ = nullptr;
    if (out_of_files) throw OutOfDescriptors(message);
    throw StorageError(message);
  }
  sqlite3_busy_timeout(db_, kBusyTimeoutMs);
  sqlite3_extended_result_codes(db_, 1);
  // The last connection to close would copy the log into the database and sync it: a few
  // milliseconds of fsync per store, paid by whoever closes it (a shutdown of a thousand stores
  // took seconds). The log is durable as it is, and the next open reads it; a store whose log grew
  // long copies it before it closes (~SqliteDatabase), so that next open stays quick.
  sqlite3_db_config(db_, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
  RegisterRegexp(db_);
  RegisterPhoneKey(db_);
  RegisterGeoFunctions(db_);
  try {
    // A new file's switch to WAL takes an exclusive lock, and SQLite answers BUSY to a second
    // process switching at the same moment without its busy handler: asked again, boundedly.
    for (int attempt = 1;; ++attempt) {
      try {
        Exec("PRAGMA journal_mode=WAL");
        break;
      } catch (const StorageError&) {
        if ((sqlite3_errcode(db_) & 0xff) != SQLITE_BUSY || attempt * 5 >= kBusyTimeoutMs) throw;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    }
    Exec(sync_full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL");
    Exec("PRAGMA foreign_keys=OFF");
  } catch (...) {
    sqlite3_close(db_);
    throw;
  }
}

namespace {
// Steps of SQLite's virtual machine between two looks at the clock: ~tens of microseconds of
// work, so a read stops within a millisecond of its deadline at a cost nobody measures.
constexpr int kStepsBetweenChecks = 2000;
int DeadlinePassed(void*) { return ReadDeadline::Passed() ? 1 : 0; }
}  // namespace

void Connection::CheckWritable() {
  // An empty write transaction takes the write lock, which a file opened read-only refuses.
  Exec("BEGIN IMMEDIATE");
  Exec("COMMIT");
}

bool Connection::HasTable(const std::string& name) {
  // A null column asks whether the table exists (SQLITE_ERROR when it does not).
  const int rc = sqlite3_table_column_metadata(db_, "main", name.c_str(), nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
  if (rc == SQLITE_OK) return true;
  if (rc == SQLITE_ERROR) return false;
  Fail(db_, "table lookup");
}

void Connection::FitCache(int kib) {
  if (kib == cache_kib_) return;
  Exec(fmt::format("PRAGMA cache_size=-{}", kib));
  cache_kib_ = kib;
}

void Connection::BoundReads() {
  sqlite3_progress_handler(db_, kStepsBetweenChecks, DeadlinePassed, nullptr);
  RegisterRegexp(db_, /*bounded=*/true);
}

Connection::~Connection() {
  for (auto& [sql, stmt] : cache_) sqlite3_finalize(stmt);
  sqlite3_close(db_);
}

bool Connection::PlanSorts(const std::string& sql) {
  if (auto known = sorts_.find(sql); known != sorts_.end()) return known->second;
  if (sorts_.size() >= kMaxCachedStatements) sorts_.clear();  // bounded as the statement cache is
  sqlite3_stmt* stmt = nullptr;
  const std::string explain = "EXPLAIN " + sql;
  if (sqlite3_prepare_v2(db_, explain.c_str(), static_cast<int>(explain.size()), &stmt, nullptr) != SQLITE_OK)
    Fail(db_, "prepare");
  bool sorts = false;
  int rc;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    const auto* opcode = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 1));
    sorts = sorts || (opcode && std::string_view(opcode) == "SorterOpen");
  }
  sqlite3_finalize(stmt);
  if (rc != SQLITE_DONE) Fail(db_, "explain");
  sorts_.emplace(sql, sorts);
  return sorts;
}

void Connection::OnCommit(std::function<void(int frames)> hook) {
  on_commit_ = std::move(hook);
  sqlite3_wal_hook(db_, on_commit_ ? &Connection::WalHook : nullptr, this);
}

int Connection::WalHook(void* self, sqlite3*, const char*, int frames) noexcept {
  // Nothing may unwind through SQLite; the commit is done whatever the hook did.
  try {
    static_cast<Connection*>(self)->on_commit_(frames);
  } catch (...) {
  }
  return SQLITE_OK;
}

std::optional<int> Connection::Checkpoint() {
  int log = 0, copied = 0;
  const int rc = sqlite3_wal_checkpoint_v2(db_, nullptr, SQLITE_CHECKPOINT_PASSIVE, &log, &copied);
  if ((rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED) return std::nullopt;
  if (rc != SQLITE_OK) Fail(db_, "checkpoint");
  return copied;
}

void Connection::SyncDatabaseFile() {
  sqlite3_file* file = nullptr;
  if (sqlite3_file_control(db_, "main", SQLITE_FCNTL_FILE_POINTER, &file) != SQLITE_OK || !file || !file->pMethods)
    Fail(db_, "database file");
  if (file->pMethods->xSync(file, SQLITE_SYNC_NORMAL) != SQLITE_OK) Fail(db_, "sync of the database file");
}

ReadSnapshot::ReadSnapshot(Connection& c) : c_(c), own_(!c.InTransaction()) {
  if (own_) c_.Run("BEGIN");
}

ReadSnapshot::~ReadSnapshot() {
  if (!own_ || !c_.InTransaction()) return;
  try {
    c_.Run("COMMIT");
  } catch (const StorageError&) {
  }
}

Statement Connection::Prepare(const std::string& sql) {
  auto it = cache_.find(sql);
  if (it != cache_.end()) return Statement(it->second, &in_use_, /*owned=*/false);
  // Statement shapes are bounded by the schema in normal use; a full cache only happens to clients
  // that generate endless shapes. Start over rather than track recency on the hot path, but never
  // while a statement is lent out: that one would be finalized under its user. Then this one
  // statement is prepared for the caller alone.
  const bool full = cache_.size() >= kMaxCachedStatements;
  if (full && in_use_ == 0) {
    for (auto& [text, cached] : cache_) sqlite3_finalize(cached);
    cache_.clear();
    by_key_.clear();
  }
  const bool cache = cache_.size() < kMaxCachedStatements;
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v3(db_, sql.c_str(), static_cast<int>(sql.size()), cache ? SQLITE_PREPARE_PERSISTENT : 0,
                         &stmt, nullptr) != SQLITE_OK) {
    sqlite3_finalize(stmt);
    Fail(db_, "prepare");
  }
  if (cache) cache_.emplace(sql, stmt);
  return Statement(stmt, &in_use_, /*owned=*/!cache);
}

Statement Connection::PrepareKeyed(const std::string& key, const std::string& sql) {
  if (!cache_.contains(sql)) Prepare(sql);  // into the cache, unless it is full and a statement lent out
  if (auto it = cache_.find(sql); it != cache_.end()) {
    by_key_.emplace(key, it->second);
    return Statement(it->second, &in_use_, /*owned=*/false);
  }
  return Prepare(sql);  // prepared for this caller alone, as Prepare does then
}

void Connection::Run(const std::string& sql) {
  auto st = Prepare(sql);
  while (st.Step()) {
  }
}

void Connection::Exec(const std::string& sql) {
  char* error = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
    std::string message = error ? error : "unknown error";
    sqlite3_free(error);
    Throw(db_, fmt::format("sqlite: exec: {}", message));
  }
}

void AppendQuoted(std::string_view identifier, std::string& out) {
  // Whole runs at a time, not a character at a time: every insert quotes each of its columns.
  out.push_back('"');
  for (auto quote = identifier.find('"'); quote != std::string_view::npos; quote = identifier.find('"')) {
    out.append(identifier.substr(0, quote + 1));
    out.push_back('"');  // doubled
    identifier.remove_prefix(quote + 1);
  }
  out.append(identifier);
  out.push_back('"');
}

std::string Quote(std::string_view identifier) {
  std::string out;
  out.reserve(identifier.size() + 2);
  AppendQuoted(identifier, out);
  return out;
}

void CheckFormat(Connection& c, const std::string& path, std::int64_t current, const char* what) {
  std::int64_t format = 0;
  {
    auto st = c.Prepare("PRAGMA user_version");
    if (st.Step()) format = std::get<std::int64_t>(st.Column(0));
  }
  if (format > current) RefuseNewerFormat(what, path, format, current);
  if (format < current) c.Exec("PRAGMA user_version = " + std::to_string(current));
}

}  // namespace crmd::storage::sqlite
