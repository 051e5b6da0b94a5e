#include "storage/sql/record_statements.hpp"

#include "storage/sql/acl_columns.hpp"
#include "storage/sql/where_compiler.hpp"

namespace crmd::storage::sql {

namespace {

// ` = <placeholder n>` after a column name.
void AppendEquals(const Dialect& d, std::size_t n, std::string& out) {
  out += " = ";
  out += d.Placeholder(n);
}

// The query of an UPDATE ... WHERE: its where, and no ACL filter (system writes).
schema::Query WhereOnly(const schema::Expr& where) {
  schema::Query q;
  q.where = where;
  return q;
}

}  // namespace

std::string SelectRows(const Dialect& d, std::string_view cls, std::string_view tag) {
  std::string sql = "SELECT ";
  if (!tag.empty()) {
    sql += "/* ";
    sql += tag;
    sql += " */ ";
  }
  return sql + "t0.* FROM " + d.Table(cls) + " AS t0";
}

std::string GetById(const Dialect& d, const std::string& select) {
  return select + " WHERE t0." + d.Quote("objectId") + " = " + d.Placeholder(1);
}

SqlFragment GetMany(const Dialect& d, const std::string& select, const std::vector<std::string>& ids) {
  SqlFragment out;
  Binder bind(d, out.params);
  out.sql = select + " WHERE " + d.TextIn("t0." + d.Quote("objectId"), ids, bind);
  return out;
}

std::string FindPage(const Dialect& d, const std::string& select, const SqlFragment& where, const std::string& order) {
  const std::size_t limit = where.params.size() + 1;
  return select + " WHERE " + where.sql + order + " LIMIT " + d.Placeholder(limit) + " OFFSET " +
         d.Placeholder(limit + 1);
}

std::string CountRows(const Dialect& d, std::string_view cls) { return "SELECT count(*) FROM " + d.Table(cls); }

std::string CountWhere(const Dialect& d, std::string_view cls, const std::string& where) {
  return "SELECT count(*) FROM " + d.Table(cls) + " AS t0 WHERE " + where;
}

std::string RowExists(const Dialect& d, std::string_view cls) {
  return "SELECT 1 FROM " + d.Table(cls) + " WHERE " + d.Quote("objectId") + " = " + d.Placeholder(1);
}

std::string FindReference(const Dialect& d, std::string_view cls, std::string_view field) {
  return "SELECT 1 FROM " + d.Table(cls) + " WHERE " + d.Quote(field) + " = " + d.Placeholder(1) + " LIMIT 1";
}

std::string InsertRow(const Dialect& d, std::string_view cls, const std::vector<std::string>& columns,
                      OnDuplicateId on_duplicate) {
  std::string sql = "INSERT INTO ";
  sql.reserve(96 + columns.size() * 28);
  sql += d.Table(cls);
  sql += " (";
  for (std::size_t i = 0; i < kOwnColumns.size(); ++i) {
    if (i) sql += ", ";
    d.AppendQuoted(kOwnColumns[i], sql);
  }
  for (const auto& column : columns) {
    sql += ", ";
    d.AppendQuoted(column, sql);
  }
  sql += ") VALUES (";
  const std::size_t values = kOwnColumns.size() + columns.size();
  for (std::size_t n = 1; n <= values; ++n) {
    if (n > 1) sql += ", ";
    sql += d.Placeholder(n);
  }
  sql += ')';
  if (on_duplicate == OnDuplicateId::kSkip) sql += " ON CONFLICT DO NOTHING RETURNING 1";
  return sql;
}

std::string InsertRows(const Dialect& d, std::string_view cls, const std::vector<std::string>& columns, std::size_t count) {
  std::string sql = InsertRow(d, cls, columns, OnDuplicateId::kFail);
  const std::size_t values = kOwnColumns.size() + columns.size();
  for (std::size_t row = 1; row < count; ++row) {
    sql += ", (";
    for (std::size_t n = 1; n <= values; ++n) {
      if (n > 1) sql += ", ";
      sql += d.Placeholder(row * values + n);
    }
    sql += ')';
  }
  sql += " ON CONFLICT DO NOTHING RETURNING ";
  d.AppendQuoted("objectId", sql);
  return sql;
}

std::string UpdateRow(const Dialect& d, std::string_view cls, const std::vector<std::string>& columns) {
  std::string sql = "UPDATE ";
  sql.reserve(96 + columns.size() * 32);
  sql += d.Table(cls);
  sql += " SET ";
  std::size_t n = 0;
  for (std::size_t i = 2; i < kOwnColumns.size(); ++i) {  // objectId and createdAt never change
    if (n) sql += ", ";
    d.AppendQuoted(kOwnColumns[i], sql);
    AppendEquals(d, ++n, sql);
  }
  for (const auto& column : columns) {
    sql += ", ";
    d.AppendQuoted(column, sql);
    AppendEquals(d, ++n, sql);
  }
  sql += " WHERE ";
  d.AppendQuoted("objectId", sql);
  AppendEquals(d, ++n, sql);
  return sql;
}

std::string DeleteRow(const Dialect& d, std::string_view cls) {
  return "DELETE FROM " + d.Table(cls) + " WHERE " + d.Quote("objectId") + " = " + d.Placeholder(1);
}

SqlFragment UpdateWhere(const Dialect& d, const schema::ClassSchema& cls, const schema::Expr& where,
                        const std::vector<std::string>& columns, const std::vector<Cell>& cells) {
  SqlFragment out;
  Binder bind(d, out.params);
  out.sql = "UPDATE " + d.Table(cls.name) + " AS t0 SET ";
  for (std::size_t i = 0; i < columns.size(); ++i) {
    if (i) out.sql += ", ";
    out.sql += d.Quote(columns[i]) + " = " + bind(cells[i]);
  }
  out.sql += " WHERE " + CompileWhere(d, WhereOnly(where), cls, out.params);
  return out;
}

std::string ClearNewestHistoryRow(const Dialect& d, std::string_view history) {
  std::string sql = "UPDATE " + d.Table(history) + " SET ";
  d.AppendQuoted("Last", sql);
  AppendEquals(d, 1, sql);
  sql += " WHERE ";
  d.AppendQuoted("objectIdValue", sql);
  AppendEquals(d, 2, sql);
  sql += " AND ";
  d.AppendQuoted("objectClass", sql);
  AppendEquals(d, 3, sql);
  sql += " AND ";
  d.AppendQuoted("Last", sql);
  AppendEquals(d, 4, sql);
  return sql;
}

SqlFragment SetAclWhere(const Dialect& d, const schema::ClassSchema& cls, const schema::Expr& where,
                        const std::optional<std::string>& acl) {
  SqlFragment out;
  Binder bind(d, out.params);
  out.sql = "UPDATE " + d.Table(cls.name) + " AS t0 SET ";
  out.sql += d.Quote("_acl") + " = " + bind(acl ? Cell(*acl) : Cell(std::monostate{}));
  out.sql += ", " + d.Quote("_rperm") + " = " + bind(Permissions(d, acl, "read"));
  out.sql += ", " + d.Quote("_wperm") + " = " + bind(Permissions(d, acl, "write"));
  out.sql += " WHERE " + CompileWhere(d, WhereOnly(where), cls, out.params);
  return out;
}

Cell Permissions(const Dialect& d, const std::optional<std::string>& acl, const char* right) {
  const auto grantees = Grantees(acl, right);
  if (!grantees) return std::monostate{};
  return d.TextList(*grantees);
}

Cell Nulls(const Dialect& d, const std::vector<std::string>& nulls) {
  if (nulls.empty()) return std::monostate{};
  return d.NullList(nulls);
}

}  // namespace crmd::storage::sql
