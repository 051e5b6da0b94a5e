// Per-class generations of an application's schema on PostgreSQL (`_crmd_generation`): every write
// transaction moves the generation of each class it changed, in its own commit, so that a count
// cached by any server on the database (storage/count_cache.hpp) is retired by the writes of all
// of them, at the moment they become visible.
#pragma once

#include <set>
#include <string>

#include "storage/postgres/pg_dialect.hpp"

namespace crmd::storage::postgres {

// Made with the store; a store made before it gets it from its next write (CREATE ... IF NOT
// EXISTS, under the application's write lock).
std::string CreateGenerations(const PgDialect& d);
// Moves the generation of each of `classes` (never empty).
std::string MoveGenerations(const PgDialect& d, const std::set<std::string>& classes);
// The generation of class $1 (no row: 0).
std::string ReadGeneration(const PgDialect& d);
// The generation of class $<class_param> and the count of `where` in one statement, so that both
// are of one snapshot.
std::string CountWithGeneration(const PgDialect& d, std::string_view cls, const std::string& where,
                                std::size_t class_param);
// Whether the table exists: $1 is its schema-qualified name.
inline constexpr const char* kGenerationsExist = "SELECT to_regclass($1) IS NOT NULL";
std::string GenerationsTable(const PgDialect& d);

}  // namespace crmd::storage::postgres
