// The statements on the rows of a class's table that both stores run alike, built here once; each
// store binds and steps them on its own connections, and its Dialect spells what differs: names,
// placeholders (`?` or `$n`), lists. What only one store does stays with it (SQLite's sorted page
// by rowid and grouped top, PostgreSQL's phone-key column and claims).
//
// Placeholders come in text order, so that SQLite's positional `?` and PostgreSQL's `$n` bind the
// same values; each builder says what they are. The text depends on names only, never on values,
// so the stores' caches of prepared statements (keyed by text) hit.
//
// The table of a class (class_tables.hpp, pg_class_tables.hpp) starts with kOwnColumns, then one
// column per stored field.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "schema/class_schema.hpp"
#include "schema/query.hpp"
#include "storage/row.hpp"
#include "storage/sql/dialect.hpp"

namespace crmd::storage::sql {

inline constexpr std::array<std::string_view, 7> kOwnColumns = {"objectId", "createdAt", "updatedAt", "_acl",
                                                                "_rperm",   "_wperm",    "_nulls"};

// `SELECT t0.* FROM <table> AS t0`, with `tag` in a comment when not empty: PostgreSQL names the
// layout of the table there, since a prepared statement keeps the row type it was prepared with.
std::string SelectRows(const Dialect& d, std::string_view cls, std::string_view tag = {});

// `select` (SelectRows) where objectId is the one placeholder.
std::string GetById(const Dialect& d, const std::string& select);
// `select` of the rows whose objectId is one of `ids` (one bound list).
SqlFragment GetMany(const Dialect& d, const std::string& select, const std::vector<std::string>& ids);
// A page of `select` that `where` (CompileWhere) keeps, in `order` (CompileOrder, may be empty).
// Binds the where's values (CompileOrder appends the order's to them), then LIMIT, then OFFSET.
std::string FindPage(const Dialect& d, const std::string& select, const SqlFragment& where, const std::string& order);

// The number of rows of the table, and of those `where` keeps (its values bound).
std::string CountRows(const Dialect& d, std::string_view cls);
std::string CountWhere(const Dialect& d, std::string_view cls, const std::string& where);
// A row when some row has objectId = the one placeholder.
std::string RowExists(const Dialect& d, std::string_view cls);
// A row when some row's Pointer `field` is the one placeholder (a delete's reference check).
std::string FindReference(const Dialect& d, std::string_view cls, std::string_view field);

// What an insert of an id the table already holds does: fail (the store maps the constraint
// error), or insert nothing and return no row (`ON CONFLICT DO NOTHING RETURNING 1`), which on
// PostgreSQL leaves the transaction around it usable.
enum class OnDuplicateId { kFail, kSkip };

// Binds kOwnColumns in order, then the values of `columns` from kInsertFirstValue on.
std::string InsertRow(const Dialect& d, std::string_view cls, const std::vector<std::string>& columns,
                      OnDuplicateId on_duplicate);
// `count` rows in one INSERT; a row whose objectId is taken is skipped, and the statement answers
// the objectIds it inserted.
std::string InsertRows(const Dialect& d, std::string_view cls, const std::vector<std::string>& columns, std::size_t count);
inline constexpr int kInsertFirstValue = 1 + static_cast<int>(kOwnColumns.size());

// Binds updatedAt, _acl, _rperm, _wperm, _nulls, then the values of `columns` from
// kUpdateFirstValue on, then objectId (after them: kUpdateFirstValue + columns.size()).
std::string UpdateRow(const Dialect& d, std::string_view cls, const std::vector<std::string>& columns);
inline constexpr int kUpdateFirstValue = 6;

// Binds objectId.
std::string DeleteRow(const Dialect& d, std::string_view cls);

// Sets `columns` to `cells` in the rows `where` keeps: every value bound, the cells' first.
SqlFragment UpdateWhere(const Dialect& d, const schema::ClassSchema& cls, const schema::Expr& where,
                        const std::vector<std::string>& columns, const std::vector<Cell>& cells);
// WriteTransaction::ClearNewestHistoryRow as one statement: binds 0, objectIdValue, objectClass, 1
// (the `Last` values as the where compiler binds them).
std::string ClearNewestHistoryRow(const Dialect& d, std::string_view history);
// Sets the ACL (NULL: public) and the columns derived from it in the rows `where` keeps.
SqlFragment SetAclWhere(const Dialect& d, const schema::ClassSchema& cls, const schema::Expr& where,
                        const std::optional<std::string>& acl);

// The `_rperm` (right "read") or `_wperm` ("write") value of a row with `acl`: NULL when public.
Cell Permissions(const Dialect& d, const std::optional<std::string>& acl, const char* right);
// The `_nulls` value of a row whose `nulls` hold an explicit null: NULL when there are none.
Cell Nulls(const Dialect& d, const std::vector<std::string>& nulls);

}  // namespace crmd::storage::sql
