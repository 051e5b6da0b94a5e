// What a caller who holds no key reads of a class its permissions open to it (one door for every
// read path: list, count, aggregate and sub-queries through Query; get and include through
// ReadableRows):
//   - the rows whose ACL names the caller, or that have none;
//   - of the change history (`_Timeline`), only the rows of classes whose records the caller may
//     get (issue 31 #8): a history row never outlives its record's read rights. The record's ACL
//     reaches its rows when it changes (logs::FollowAcl); its class's permissions, which can change
//     without any record being written, are applied here, as the rows are read.
// The Master identity reads every row.
//
// Thread-safe: pure functions of their arguments.
#pragma once

#include <string>
#include <vector>

#include "auth/identity.hpp"
#include "query/where.hpp"
#include "schema/class_schema.hpp"
#include "storage/row.hpp"

namespace crmd::query {

// Sets `query`'s readable_by and, when `cls` or a sub-query of its where is `_Timeline`, its
// history_of. Call it once the where is set. Nothing for the Master identity.
void LimitToReadable(const auth::Identity& identity, const schema::Snapshot& snapshot, const schema::ClassSchema& cls,
                     Query& query);

// The rows of a lookup by id (a get, an include) the caller may read, the class's permissions
// already granted. Holds references to its arguments, which must outlive it.
class ReadableRows {
 public:
  ReadableRows(const auth::Identity& identity, const schema::Snapshot& snapshot);
  bool Allows(const schema::ClassSchema& cls, const storage::Row& row) const;

 private:
  const auth::Identity& identity_;
  const schema::Snapshot& snapshot_;
  std::vector<std::string> principals_;
};

}  // namespace crmd::query
