// Which indexes crmd makes for a class, in every store (the index rule): createdAt and updatedAt
// (append-only logs: createdAt only), each Pointer field unless a declared index leads with it
// (partial: set pointers only), every declared plain index, each ending in (createdAt, objectId)
// so that filters on its fields sort by creation time and walk the cursor of spec §4.2 from the
// index alone. Text-indexed fields (`"text"` in a declared index) are indexed by each store's own
// full-text means. A schema change makes the indexes of `after` that `before` lacks and drops the
// ones it lost.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "schema/class_schema.hpp"

namespace crmd::storage::sql {

struct IndexSpec {
  std::string name;                                  // `idx:<T>:<field>` or `uidx:<T>:<declared name>`
  std::vector<std::pair<std::string, bool>> columns;  // column, descending
  bool set_only = false;                             // only rows whose first column is not NULL

  bool operator==(const IndexSpec&) const = default;
};

std::vector<IndexSpec> ClassIndexes(const schema::ClassSchema& cls);

// The fields some declared index marks "text", in declaration order.
std::vector<std::string> TextFields(const schema::ClassSchema& cls);

// What a schema change does to the indexes: `drop` (by name) first, `create` after the columns.
struct IndexChanges {
  std::vector<std::string> drop;
  std::vector<IndexSpec> create;
};
IndexChanges DiffIndexes(const schema::ClassSchema& before, const schema::ClassSchema& after);

}  // namespace crmd::storage::sql
