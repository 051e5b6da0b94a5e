// `where` JSON -> typed, validated AST (query/where.hpp), resolved against the class schema.
//
// Not errors (spec §4.3, §7): a filter value of the wrong type for its field (a bare id for a
// Pointer, a flat string for a Date) matches nothing; a field the class lacks reads as absent.
// Errors: unknown operators (107 `bad constraint: $x`), malformed names (105), operators that
// cannot apply to the field (102), a `$text` without a text index (500, logged IndexNotFound),
// limits exceeded (102).
#pragma once

#include <boost/json.hpp>

#include "auth/identity.hpp"
#include "query/where.hpp"
#include "schema/class_schema.hpp"
#include "util/result.hpp"

namespace crmd::query {

// Bounds on one where clause: far above any real filter, low enough that one request cannot make
// the SQL compiler or SQLite's parser do unbounded work.
// SQLite refuses expressions deeper than 1,000; 500 constraints keep every shape below that.
inline constexpr std::size_t kMaxWhereNodes = 500;
inline constexpr std::size_t kMaxSubQueryDepth = 4;
inline constexpr std::size_t kMaxInValues = 100000;
// `$regex` constraints one query holds at most (sub-queries included), and the longest pattern:
// each is run on every row the query reads, and compiled with up to kRegexMemory of automaton.
inline constexpr std::size_t kMaxRegexes = 16;
inline constexpr std::size_t kMaxRegexLength = 1000;

// `snapshot` resolves sub-query classes; `identity` is checked (find) on each of them through
// auth::Authorize, the same door as a direct query.
Result<Expr> ParseWhere(const boost::json::value& where, const schema::ClassSchema& cls,
                        const schema::Snapshot& snapshot, const auth::Identity& identity);

}  // namespace crmd::query
