// query::Expr -> SQLite SQL. Identifiers come from the schema (validated, then quoted); every
// value, path, pattern and list is a bound parameter, so the SQL text depends only on the shape
// of the query, never on client values.
#pragma once

#include <string>
#include <vector>

#include "query/where.hpp"
#include "storage/row.hpp"

namespace crmd::storage::sqlite {

struct SqlFragment {
  std::string sql;
  std::vector<Cell> params;  // in placeholder order
};

// The boolean SQL of `query`'s where (plus its ACL hook) against `table` aliased as `t0`.
SqlFragment CompileWhere(const query::Query& query, const std::string& table);

// The `FTS5` table that indexes `table`'s text fields.
std::string TextIndexTable(const std::string& table);

}  // namespace crmd::storage::sqlite
