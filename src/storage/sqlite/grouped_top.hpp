// A sorted page read run by run from a declared index, instead of sorting every match.
//
// The commonest list query filters on a declared index and sorts by creation time:
//   where City = x and Score >= n, order -createdAt, limit 100, with an index (City, Score).
// Every declared index ends in (createdAt, objectId) (CreateIndexes in sqlite_database.cpp), so
// the matches sit in the index as one run per value of the last declared column (Score), each run
// already in (createdAt, objectId) order. The plain statement reads every match (5,000 of them on
// 100,000 rows) into SQLite's sorter to keep 100. Here the runs are read in turn, each only while
// its rows still beat the worst row kept, and the scan then seeks past the rest of the run: about
// 500 index entries instead of 5,000 for that page.
//
// The page is the same rows in the same order as the plain statement's (ORDER BY createdAt,
// objectId: a total order), whatever SQLite's plan: the grouping only decides how much is read.
// When the statement would need SQLite's sorter after all (the index is missing) or the runs are
// too short to skip anything, FindGroupedTop says so and the caller runs the plain statement.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "schema/query.hpp"
#include "schema/class_schema.hpp"
#include "storage/database.hpp"
#include "storage/sqlite/connection.hpp"
#include "storage/sqlite/where_sql.hpp"

namespace crmd::storage::sqlite {

struct GroupedTopPlan {
  std::string group_column;      // the index's last declared column: the runs are its values
  bool group_descending = false; // the direction the runs are read in: the one the index reads
                                 // createdAt in the page's direction
  bool descending = false;       // the page's order on (createdAt, objectId)
};

// Rows kept at most while merging: skip + limit. They are held in memory until the page is known,
// and a deeper page reads most of its matches anyway; it runs the plain statement.
inline constexpr std::int64_t kMaxGroupedTopRows = 1000;

// A plan when `query` is a page (0 < limit, skip + limit within kMaxGroupedTopRows) ordered by
// createdAt alone or by createdAt then objectId in the same direction, whose `where` is a
// conjunction holding an equality on every declared column of one of `cls`'s indexes but the
// last, and a range on the last. Further conjuncts (and the ACL) only filter, except those SQLite
// would evaluate again for every run read (sub-queries, $text, $relatedTo, long value lists):
// with those, none. Otherwise none.
std::optional<GroupedTopPlan> PlanGroupedTop(const schema::ClassSchema& cls, const schema::Query& query);

// What FindGroupedTop did, for tests and profiles.
struct GroupedTopStats {
  std::int64_t rows = 0;      // index entries read out of SQLite
  std::int64_t seeks = 0;     // statements run again to skip the rest of a run
  std::int64_t vm_steps = 0;  // SQLite's work, entries it skipped by itself included
};

struct GroupedTopRow {
  std::int64_t rowid = 0;
  std::string object_id;
};

// The rows of the page (`skip` rows dropped, at most `limit` kept), in page order; none when the
// plain statement should run instead (see the top of this file). `plan` is PlanGroupedTop's for
// `query` on `cls`. Call inside one read transaction (ReadSnapshot): the runs are read by several
// statements, which must see one snapshot. Throws StorageError as Statement does.
std::optional<std::vector<GroupedTopRow>> FindGroupedTop(Connection& c, const schema::ClassSchema& cls,
                                                         const schema::Query& query, const GroupedTopPlan& plan,
                                                         GroupedTopStats* stats = nullptr);

// Hands the page's rows to a sink in page order, whatever order they are read in: a row that comes
// before its turn is held until then. (The page's statement reads them in order; this keeps the
// answer right should a future SQLite plan it otherwise.)
class PageOrder {
 public:
  explicit PageOrder(const std::vector<GroupedTopRow>& page) : page_(page) {}
  // False once the sink has stopped the read.
  bool Add(Row& row, const RowSink& sink);
  // Whether every row of the page went to the sink (or the sink stopped the read).
  bool Done() const { return stopped_ || next_ == page_.size(); }

 private:
  const std::vector<GroupedTopRow>& page_;
  std::size_t next_ = 0;
  bool stopped_ = false;
  std::unordered_map<std::string, Row> early_;
};

}  // namespace crmd::storage::sqlite
