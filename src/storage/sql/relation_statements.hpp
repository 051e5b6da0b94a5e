// The statements on the join tables of Relation fields (`_Join:<field>:<class>(owningId,
// relatedId)`) that both stores run alike; see record_statements.hpp for how they are bound.
// Adding and removing links stays with each store: SQLite steps one row per id through a cached
// statement, PostgreSQL sends the whole list in one.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "storage/sql/dialect.hpp"

namespace crmd::storage::sql {

// Removes every link of the owner bound as the one placeholder (the owner is being deleted).
std::string UnlinkOwner(const Dialect& d, std::string_view owner_class, std::string_view field);

// The owners linked to one of `related_ids` (one bound list), each once.
SqlFragment RelationOwners(const Dialect& d, std::string_view owner_class, std::string_view field,
                           const std::vector<std::string>& related_ids);

}  // namespace crmd::storage::sql
