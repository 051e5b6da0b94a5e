// The storage interface: everything above storage/ reads and writes records through it, so a
// PostgreSQL implementation can replace SQLite without touching api/ or write/.
//
// Thread-safety: a Database is shared by all request threads. Reads may run concurrently.
// BeginWrite() returns a transaction that holds the store's write lock until it commits or is
// destroyed (rolled back), so writes to one application are serialised here, not by callers.
// Nothing here depends on which thread calls: a transaction, a write group and their savepoints
// are handles, passed to whoever writes in them (app::WriteUnit).
// Faults (I/O errors, a corrupt file) throw StorageError; expected outcomes are return values.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "schema/aggregate_plan.hpp"
#include "schema/query.hpp"
#include "schema/class_schema.hpp"
#include "storage/row.hpp"
#include "util/ids.hpp"

namespace crmd::storage {

struct StorageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The process (or system) ran out of file descriptors opening a store or one of its files: a
// condition of the moment, answered 503, not a fault of the store.
struct OutOfDescriptors : StorageError {
  using StorageError::StorageError;
};

// The store's server cannot be reached (PostgreSQL down or restarting): a condition of the moment,
// answered 503; the next request tries again.
struct StoreUnavailable : StorageError {
  using StorageError::StorageError;
};

// A read that ran past the deadline of its thread's ReadDeadline: stopped, nothing returned.
struct ReadTimedOut : StorageError {
  using StorageError::StorageError;
};

// The time bound of the reads this thread starts while it is in scope (they throw ReadTimedOut
// once it passed; checked every few thousand steps of SQLite's machine, and between two calls of a
// function such as $regex's). Scopes nest; the innermost decides. Reads inside a write's
// transaction are not bounded by it: the write's own limits bound them.
class ReadDeadline {
 public:
  explicit ReadDeadline(std::chrono::steady_clock::time_point deadline);
  ~ReadDeadline();
  ReadDeadline(const ReadDeadline&) = delete;
  ReadDeadline& operator=(const ReadDeadline&) = delete;
  // Whether this thread's innermost deadline has passed (false without one).
  static bool Passed();
  // The time this thread's innermost deadline leaves (nullopt without one), for a store that
  // bounds its statements itself (PostgreSQL's statement_timeout).
  static std::optional<std::chrono::milliseconds> Remaining();
  // Makes every deadline pass now and from now on, on every thread: a stopping server that
  // waited long enough ends the reads still running.
  static void EndAll();
  // A store whose reads do not look at the deadline while they run (PostgreSQL's statements run
  // on the server) is told by `hook` when EndAll() is called; it returns the hook's id for
  // RemoveEndAllHook.
  static int AddEndAllHook(std::function<void()> hook);
  static void RemoveEndAllHook(int id);

 private:
  std::optional<std::chrono::steady_clock::time_point> previous_;
};

// An insert of an objectId that a row of the class already has. The statement failed alone: the
// transaction goes on.
struct DuplicateKeyError : StorageError {
  using StorageError::StorageError;
};

enum class Durability {
  kFull,    // a commit is on disk before it returns (fsync of the log on every commit)
  kNormal,  // survives a process crash; the last commits may be lost on power failure
};

// Receives rows of a Find one at a time (cells follow StoredColumns); each row is the sink's to keep
// (it may move from it). Returning false stops.
using RowSink = std::function<bool(Row&)>;

// Where a record is pointed at from: the class and the Pointer field.
struct Reference {
  std::string table;
  std::string field;
};

// A stored trigger activation waiting for its actions (triggers/activation.hpp): added in the
// transaction of the write that fired it, changed and removed in those of its actions, so that
// what committed and what is left to do never disagree. `payload` is the triggers layer's text.
struct OutboxEntry {
  std::int64_t id = 0;  // increasing, never reused
  int lane = 0;         // which of the trigger runner's queues runs it
  std::string payload;
};

// A store's plan for a Find (Database::ExplainFind).
struct FindPlan {
  // The indexes it reads, by crmd's names: a declared index's name (`city_score`), or the field of
  // an index crmd makes itself (`createdBy`).
  std::vector<std::string> indexes;
  bool covering = false;   // rows come from an index alone, not the table
  bool full_scan = false;  // the class's table is read whole
  int sorts = 0;           // sorts the index order does not spare
  std::string text;        // the store's own words, for messages
};

class WriteTransaction {
 public:
  virtual ~WriteTransaction() = default;  // rolls back unless Commit() succeeded

  // Creates the class's table (before == nullptr) or adds the columns `after` has and `before`
  // lacks and drops those it lost (with their data); creates and drops indexes (`indexes`: name -> {field: 1 | -1 | "text"}) to match
  // `after`; creates join tables of Relation fields; persists the definition.
  virtual void SaveClass(const schema::ClassSchema* before, const schema::ClassSchema& after) = 0;

  // `row.cells` is aligned with `columns` (declared field names). Every other column is NULL.
  // Throws DuplicateKeyError when a row of the class has `row.object_id` already.
  virtual void Insert(const schema::ClassSchema& cls, const std::vector<std::string>& columns,
                      const Row& row) = 0;
  // Sets updatedAt, the ACL, the null list and the given columns of `row.object_id`.
  virtual void Update(const schema::ClassSchema& cls, const std::vector<std::string>& columns,
                      const Row& row) = 0;
  // Drops the class: its table, indexes, text index, join tables and definition.
  virtual void DropClass(const schema::ClassSchema& cls) = 0;
  // How many rows the class holds, inside this transaction.
  virtual std::int64_t Count(const schema::ClassSchema& cls) = 0;

  // Adds (or removes) rows of the join table of Relation `field` owned by `owning_id`.
  // Adding an existing pair or removing a missing one is not an error.
  virtual void ChangeRelation(const schema::ClassSchema& cls, std::string_view field,
                              std::string_view owning_id, const std::vector<std::string>& related_ids,
                              bool add) = 0;
  // False when there was no such row (not an error). The row's relation rows go with it.
  virtual bool Delete(const schema::ClassSchema& cls, std::string_view object_id) = 0;
  // Sets `columns` to `cells` on every row `where` selects, leaving updatedAt, the ACL and the
  // null list as they are: bookkeeping of crmd's own (a history row's `Last`), not a record
  // update. Returns how many rows changed.
  virtual std::int64_t UpdateWhere(const schema::ClassSchema& cls, const schema::Expr& where,
                                   const std::vector<std::string>& columns, const std::vector<Cell>& cells) = 0;
  // Sets the ACL (and the read and write lists derived from it) of every row `where` selects,
  // leaving updatedAt and every field as they are: a record's history rows following its new ACL
  // (logs/timeline). Returns how many rows changed.
  virtual std::int64_t SetAclWhere(const schema::ClassSchema& cls, const schema::Expr& where,
                                   const std::optional<std::string>& acl) = 0;

  // The row with every declared column, read inside this transaction.
  virtual std::optional<Row> Get(const schema::ClassSchema& cls, std::string_view object_id) = 0;
  // The same row with only the cells of `fields` filled; every other field reads as absent. For a
  // write that needs a row's ACL and a few of its values (an update's operators), not all of them.
  virtual std::optional<Row> GetFields(const schema::ClassSchema& cls, std::string_view object_id,
                                       const std::vector<std::string_view>& fields) = 0;
  virtual bool Exists(const schema::ClassSchema& cls, std::string_view object_id) = 0;
  // Find inside this transaction (uniqueness checks, single-use tokens).
  virtual void Find(const schema::ClassSchema& cls, const schema::Query& query, const RowSink& sink) = 0;

  // Records of `cls` whose `field` has phone key `key` (phone::Key), through the expression index
  // EnsurePhoneKeyIndex made (a scan without it): up to `limit` rows of objectId, createdAt and
  // the field (cells: the field's), in no set order.
  virtual std::vector<Row> FindByPhoneKey(const schema::ClassSchema& cls, std::string_view field,
                                          std::string_view key, std::size_t limit) = 0;

  // The first Pointer field in `classes` that points at `target_class`/`object_id`, if any,
  // leaving out the classes `ignored` names.
  virtual std::optional<Reference> FindReference(const schema::Snapshot& classes,
                                                 std::string_view target_class,
                                                 std::string_view object_id,
                                                 const std::vector<std::string_view>& ignored = {}) = 0;

  // The outbox of trigger activations (OutboxEntry). Changing or removing an entry that is gone is
  // not an error.
  virtual std::int64_t AddOutbox(int lane, std::string_view payload) = 0;
  virtual std::optional<OutboxEntry> GetOutbox(std::int64_t id) = 0;
  virtual void SetOutbox(std::int64_t id, std::string_view payload) = 0;
  virtual void RemoveOutbox(std::int64_t id) = 0;

  // A savepoint inside this transaction, for a nested write that must fail alone: opened, then
  // either released (its work stays in the transaction) or rolled back (undone). They nest; each
  // call ends the innermost open one. Rolling back one that SQLite already undid (an error rolled
  // back the whole transaction) is not an error.
  virtual void OpenSavepoint() = 0;
  virtual void ReleaseSavepoint() = 0;
  virtual void RollbackSavepoint() = 0;

  // Durable when it returns, except for a write of a write group (durable at the group's Flush).
  virtual void Commit() = 0;
  // Whether the transaction runs alone and keeps the store until destroyed, so that a schema
  // change it made can be published after Commit() and before any other write starts.
  virtual bool Exclusive() const = 0;
};

class Database {
 public:
  virtual ~Database() = default;

  virtual std::vector<schema::ClassSchema> LoadSchema() = 0;
  // A write of its own. Grouped (default): it may share its commit with concurrent writes (one
  // fsync); its Commit() returns once durable and releases the store. Exclusive: it waits for the
  // open group, runs alone and keeps the store until destroyed, so a schema change it made can be
  // published before any other write starts (schema-changing writes must be exclusive).
  virtual std::unique_ptr<WriteTransaction> BeginWrite(bool exclusive = false) = 0;

  // A write group (an application's write queue, a batch): the writes begun through it share
  // one transaction, each in its own savepoint, and are made durable together by Flush() instead of
  // each by its own Commit() (which returns at once). An exclusive write begun through it is never
  // nested: the group is flushed first and the write then runs alone as usual, so a schema change
  // is still published only after its own commit. Writes begun since the last flush belong to the
  // flush Epoch() names; Failed(epoch) tells whether its COMMIT failed, in which case they were
  // all lost. The destructor flushes. A group holds the store from its first write to its flush,
  // so groups and the writes of other threads take turns; a group is used by one thread at a time.
  class WriteGroup {
   public:
    virtual ~WriteGroup() = default;
    virtual std::unique_ptr<WriteTransaction> BeginWrite(bool exclusive) = 0;
    virtual std::uint64_t Epoch() const = 0;
    virtual void Flush() = 0;  // never throws: a failure is what Failed() reports
    virtual bool Failed(std::uint64_t epoch) const = 0;
    // Flushes (and so fails) the open group if an error made the store roll all of it back;
    // otherwise does nothing. Called between writes, so that no write is counted in a lost group.
    virtual void FlushIfLost() = 0;
    // Whether a writer of another thread waits for an exclusive turn, which it gets at the next
    // Flush: for tests, which must not guess it from a sleep.
    virtual bool ExclusiveWaiting() const = 0;
  };
  virtual std::unique_ptr<WriteGroup> BeginWriteGroup() = 0;

  // Reads return rows whose cells follow the class's declared fields (Relations excluded).
  virtual std::optional<Row> Get(const schema::ClassSchema& cls, std::string_view object_id) = 0;
  virtual RowSet GetMany(const schema::ClassSchema& cls, const std::vector<std::string>& ids) = 0;
  // Streams the rows `query` selects, in its order, without holding them all.
  virtual void Find(const schema::ClassSchema& cls, const schema::Query& query, const RowSink& sink) = 0;
  // How many rows `query`'s where selects (limit and skip ignored).
  virtual std::int64_t Count(const schema::ClassSchema& cls, const schema::Query& query) = 0;
  // Rows of [key, accumulator...] (or [value] when plan.distinct), one per group.
  virtual std::vector<std::vector<Cell>> Aggregate(const schema::ClassSchema& cls,
                                                   const schema::AggregatePlan& plan) = 0;
  // How the store would run Find, for tests and diagnosis, in terms every store can report.
  virtual FindPlan ExplainFind(const schema::ClassSchema& cls, const schema::Query& query) = 0;

  // Owners (owningId) of Relation `field` of `cls` that hold any of `related_ids`.
  virtual std::vector<std::string> RelationOwners(const schema::ClassSchema& cls, std::string_view field,
                                                  const std::vector<std::string>& related_ids) = 0;

  // Makes the index on phone::Key of `field` of `cls` unless it exists (spec §4.9: contacts are
  // found by phone in any form). Returns whether it had to (an exclusive write; checked by a read).
  virtual bool EnsurePhoneKeyIndex(const schema::ClassSchema& cls, std::string_view field) = 0;

  // Outbox entries with an id above `after`, in id order, at most `limit` (committed ones only).
  virtual std::vector<OutboxEntry> ReadOutbox(std::int64_t after, std::size_t limit) = 0;
  // Takes (or keeps) entry `id` for this process's trigger runner for `lease`, so that several
  // servers that find the same entry (one restarting reads every outbox) run it once: kHeld while
  // another process's lease runs (a server on the same database runs it; ask again later), kGone
  // when the entry is no more. A store of one process (SQLite) has nobody to share with.
  enum class Claim { kTaken, kHeld, kGone };
  virtual Claim ClaimOutbox(std::int64_t id, std::chrono::seconds lease) {
    (void)id, (void)lease;
    return Claim::kTaken;
  }

  // True when the store's own consistency check passes.
  virtual bool CheckIntegrity() = 0;

  // Another process changed the application's tables (Stores::Watch): what the store keeps of
  // them is read again.
  virtual void ForgetLayout() {}
};


// The first row of `cls` whose `column` equals `value`, read from a Database or inside a
// WriteTransaction (both have Find). For internal lookups: sessions, logins, reset tokens.
template <typename Source>
std::optional<Row> FindFirst(Source& source, const schema::ClassSchema& cls, std::string column, Cell value) {
  schema::Query q;
  q.where = schema::FieldEquals(std::move(column), std::move(value));
  q.limit = 1;
  std::optional<Row> found;
  source.Find(cls, q, [&](const Row& row) {
    found = row;
    return false;
  });
  return found;
}

// Inserts `row` under a generated objectId (from `next`). Generated ids may repeat, very rarely
// (ids::NewObjectId): the insert then fails alone (DuplicateKeyError) and another id is drawn;
// `drawn(row)` runs after each draw, before the insert, for what the id decides (a user's default
// ACL). Eight repeats in a row mean a broken clock or generator, not chance: StorageError.
template <typename Drawn, typename Next = std::string (*)()>
void InsertWithNewId(WriteTransaction& txn, const schema::ClassSchema& cls, const std::vector<std::string>& columns,
                     Row& row, Drawn drawn, Next next = static_cast<std::string (*)()>(&ids::NewObjectId)) {
  constexpr int kAttempts = 8;
  for (int attempt = 1;; ++attempt) {
    row.object_id = next();
    drawn(row);
    try {
      txn.Insert(cls, columns, row);
      return;
    } catch (const DuplicateKeyError&) {
      if (attempt == kAttempts)
        throw StorageError("no free objectId in " + cls.name + " after " + std::to_string(kAttempts) + " attempts");
    }
  }
}

}  // namespace crmd::storage
