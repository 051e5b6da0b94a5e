// One write to an application's store (RecordStore::BeginWrite, WriteGroup::BeginWrite): the
// record changes, schema changes and outbox entries of one outermost write, committed together.
//
// Not thread-safe: a transaction is a handle, used by one thread at a time (app::WriteUnit), not
// tied to the thread that began it. It holds the store's write lock until it commits or is
// destroyed (rolled back). Faults throw StorageError; expected outcomes are return values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "schema/class_schema.hpp"
#include "schema/query.hpp"
#include "storage/outbox_writes.hpp"
#include "storage/row.hpp"
#include "storage/storage_error.hpp"
#include "util/ids.hpp"

namespace crmd::storage {

// Receives rows of a Find one at a time (cells follow StoredColumns); each row is the sink's to keep
// (it may move from it). Returning false stops.
using RowSink = std::function<bool(Row&)>;

// Where a record is pointed at from: the class and the Pointer field.
struct Reference {
  std::string table;
  std::string field;
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
  // Clears `Last` on the rows of `history` (`_Timeline`) that hold it for the record
  // `class_name`/`object_id`: the UpdateWhere every history row of a change to an existing record
  // begins with (logs/timeline). Returns how many rows changed. A store may run it as one fixed
  // statement instead of compiling the where each time.
  virtual std::int64_t ClearNewestHistoryRow(const schema::ClassSchema& history, std::string_view class_name,
                                             std::string_view object_id) {
    schema::Expr newest;
    newest.kind = schema::ExprKind::kAnd;
    newest.children.push_back(schema::FieldEquals("objectIdValue", std::string(object_id)));
    newest.children.push_back(schema::FieldEquals("objectClass", std::string(class_name)));
    newest.children.push_back(schema::FieldEquals("Last", std::int64_t{1}));
    return UpdateWhere(history, newest, {"Last"}, {std::int64_t{0}});
  }
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
  // StoreAdmin::EnsurePhoneKeyIndex made (a scan without it): up to `limit` rows of objectId,
  // createdAt and the field (cells: the field's), in no set order.
  virtual std::vector<Row> FindByPhoneKey(const schema::ClassSchema& cls, std::string_view field,
                                          std::string_view key, std::size_t limit) = 0;

  // The first Pointer field in `classes` that points at `target_class`/`object_id`, if any,
  // leaving out the classes `ignored` names.
  virtual std::optional<Reference> FindReference(const schema::Snapshot& classes,
                                                 std::string_view target_class,
                                                 std::string_view object_id,
                                                 const std::vector<std::string_view>& ignored = {}) = 0;

  // The outbox of trigger activations, inside this transaction; as long-lived as the transaction.
  virtual OutboxWrites& outbox() = 0;

  // A savepoint inside this transaction, for a nested write that must fail alone: opened, then
  // either released (its work stays in the transaction) or rolled back (undone). They nest; each
  // call ends the innermost open one. Rolling back one that SQLite already undid (an error rolled
  // back the whole transaction) is not an error.
  virtual void OpenSavepoint() = 0;
  virtual void ReleaseSavepoint() = 0;
  virtual void RollbackSavepoint() = 0;

  // Inserts `rows`, each under its own objectId, in as few statements as the store can: returns the
  // positions of the rows not inserted because a row of the class had their objectId. Other faults
  // throw, as Insert's. One row at a time unless the store does better (PostgreSQL: multi-row
  // INSERTs, a round trip for many rows).
  virtual std::vector<std::size_t> InsertMany(const schema::ClassSchema& cls, const std::vector<std::string>& columns,
                                              const std::vector<Row>& rows) {
    std::vector<std::size_t> repeated;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      try {
        Insert(cls, columns, rows[i]);
      } catch (const DuplicateKeyError&) {
        repeated.push_back(i);
      }
    }
    return repeated;
  }

  // Durable when it returns, except for a write of a write group (durable at the group's Flush).
  virtual void Commit() = 0;
  // Whether the transaction runs alone and keeps the store until destroyed, so that a schema
  // change it made can be published after Commit() and before any other write starts.
  virtual bool Exclusive() const = 0;

  // Issue 36: tells every server sharing the store `payload` (at most kMaxAnnouncement bytes)
  // once this transaction commits, never if it (or the savepoint around the call) rolls back; in
  // commit order (Stores::WatchRecords). False when the store is this process's alone (SQLite):
  // nothing was sent, and the caller tells its own process instead.
  static constexpr std::size_t kMaxAnnouncement = 7'000;  // PostgreSQL's NOTIFY takes < 8,000 bytes
  virtual bool Announce(std::string_view payload) {
    (void)payload;
    return false;
  }
};

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

// InsertWithNewId for many rows at once (InsertMany): the rows whose drawn id repeated draw again.
inline void InsertManyWithNewIds(WriteTransaction& txn, const schema::ClassSchema& cls,
                                 const std::vector<std::string>& columns, std::vector<Row>& rows) {
  constexpr int kAttempts = 8;
  for (auto& row : rows) row.object_id = ids::NewObjectId();
  std::vector<Row> pending = std::move(rows);
  rows.clear();
  for (int attempt = 1; !pending.empty(); ++attempt) {
    const std::vector<std::size_t> repeated = txn.InsertMany(cls, columns, pending);
    if (!repeated.empty() && attempt == kAttempts)
      throw StorageError("no free objectId in " + cls.name + " after " + std::to_string(kAttempts) + " attempts");
    std::vector<Row> again;
    std::size_t next = 0;
    for (std::size_t i = 0; i < pending.size(); ++i) {
      if (next < repeated.size() && repeated[next] == i) {
        ++next;
        pending[i].object_id = ids::NewObjectId();
        again.push_back(std::move(pending[i]));
      } else {
        rows.push_back(std::move(pending[i]));
      }
    }
    pending = std::move(again);
  }
}

}  // namespace crmd::storage
