// schema::Query -> SQL, through a Dialect (dialect.hpp): the part of every store's SQL that does not
// depend on the store. Identifiers come from the schema (validated, then quoted); every value,
// path, pattern and list is a bound parameter, so the SQL text depends only on the shape of the
// query, never on client values.
#pragma once

#include <string>

#include "schema/query.hpp"
#include "schema/class_schema.hpp"
#include "storage/sql/dialect.hpp"

namespace crmd::storage::sql {

// The boolean SQL of `query`'s where (plus its ACL hook) against the table of `cls` aliased as
// `t0`. Its placeholders are the first ones of the statement.
SqlFragment CompileWhere(const Dialect& dialect, const schema::Query& query, const schema::ClassSchema& cls);
// The same where placed after values the statement binds before it (an UPDATE's SET): its
// placeholders follow those of `params`, and its values are appended to them.
std::string CompileWhere(const Dialect& dialect, const schema::Query& query, const schema::ClassSchema& cls,
                         std::vector<Cell>& params);

// ` ORDER BY ...` of `query` against `t0`, its ties broken by createdAt, then objectId (in the last
// key's direction), so that a sorted page is a total order: the same rows in the same order on
// every read, and skip pages neither repeat nor lose rows that tie on the sort keys of a table that
// did not change. createdAt before objectId: every index crmd makes ends in (createdAt, objectId),
// so a sort one serves stays served. Empty when the query has no order. A nearest-first order
// (Query::nearest) binds its point after `params` (the where's) in numbered placeholders, which
// the statement may repeat.
std::string CompileOrder(const Dialect& dialect, const schema::Query& query, std::vector<Cell>& params);

// The declared type of `column` of `cls`, builtins included; nullopt for a name it lacks.
std::optional<schema::FieldType> ColumnType(const schema::ClassSchema& cls, std::string_view column);

}  // namespace crmd::storage::sql
