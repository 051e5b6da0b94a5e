// The record store of one application: its schema, its writes and the reads of its records.
// Everything above storage/ that reads or writes records does it through this interface, so a
// PostgreSQL implementation replaces SQLite without touching api/, write/ or query/.
//
// Thread-safety: shared by all request threads. Reads may run concurrently. BeginWrite() returns a
// transaction that holds the store's write lock until it commits or is destroyed (rolled back), so
// writes to one application are serialised here, not by callers. Faults (I/O errors, a corrupt
// file) throw StorageError; expected outcomes are return values.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "schema/aggregate_plan.hpp"
#include "schema/class_schema.hpp"
#include "schema/query.hpp"
#include "storage/class_definitions.hpp"
#include "storage/read_deadline.hpp"
#include "storage/row.hpp"
#include "storage/storage_error.hpp"
#include "storage/write_group.hpp"
#include "storage/write_transaction.hpp"

namespace crmd::storage {

// A store's plan for a Find (RecordStore::ExplainFind).
struct FindPlan {
  // The indexes it reads, by crmd's names: a declared index's name (`city_score`), or the field of
  // an index crmd makes itself (`createdBy`).
  std::vector<std::string> indexes;
  bool covering = false;   // rows come from an index alone, not the table
  bool full_scan = false;  // the class's table is read whole
  int sorts = 0;           // sorts the index order does not spare
  std::string text;        // the store's own words, for messages
};

class RecordStore : public WriteGroups {
 public:
  // Every class, each shared with the other stores that define it alike (class_definitions.hpp).
  virtual std::vector<ClassDefinition> LoadSchema() = 0;
  // A write of its own. Grouped (default): it may share its commit with concurrent writes (one
  // fsync); its Commit() returns once durable and releases the store. Exclusive: it waits for the
  // open group, runs alone and keeps the store until destroyed, so a schema change it made can be
  // published before any other write starts (schema-changing writes must be exclusive).
  virtual std::unique_ptr<WriteTransaction> BeginWrite(bool exclusive = false) = 0;

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
};

// The first row of `cls` whose `column` equals `value`, read from a RecordStore or inside a
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

}  // namespace crmd::storage
