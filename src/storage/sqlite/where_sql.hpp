// The SQLite dialect of the where compiler (storage/sql/where_compiler.hpp): JSON through json1
// (`json_each`, `json_extract`), lists bound as one JSON array, `$regex` through crmd_regexp
// (regexp.hpp), `$text` through the class's FTS5 table.
#pragma once

#include <string>

#include "storage/sql/dialect.hpp"
#include "storage/sql/where_compiler.hpp"

namespace crmd::storage::sqlite {

using sql::SqlFragment;

const sql::Dialect& SqliteDialect();

// The where of `query` against the table of `cls` aliased as `t0` (sql::CompileWhere).
SqlFragment CompileWhere(const schema::Query& query, const schema::ClassSchema& cls);

// The `FTS5` table that indexes `table`'s text fields.
std::string TextIndexTable(const std::string& table);

}  // namespace crmd::storage::sqlite
