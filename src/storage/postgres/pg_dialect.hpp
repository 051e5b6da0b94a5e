// The PostgreSQL dialect of the where compiler (storage/sql/where_compiler.hpp), for the schema of
// one application: typed columns compared as they are, JSON values (`jsonb`) through the helper
// functions of the `crmd` schema (pg_functions.hpp), lists bound as one array literal,
// `$regex` as `~` (its pattern checked by RE2 first), `$text` as `tsvector @@ tsquery` over the
// GIN expression index of the field.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "schema/class_schema.hpp"
#include "storage/sql/dialect.hpp"

namespace crmd::storage::postgres {

// A quoted identifier. PostgreSQL cuts names at 63 bytes: a longer one is shortened to a prefix
// and a hash of the whole, the same every time.
std::string QuoteName(std::string_view identifier);
// The name QuoteName quotes: `identifier` itself, or its shortened form.
std::string ShortName(std::string_view identifier);

// An array literal (`{"a","b"}`) of the cells as text, for `= ANY($n::text[])` and friends.
std::string ArrayLiteral(const std::vector<std::string>& items);

// The SQL type of a field's column (`jsonb` for JSON values, `timestamptz` for dates).
std::string ColumnSqlType(schema::FieldType type);

// A timestamptz column as crmd's ISO text (`2026-11-26T19:04:45.100Z`).
std::string IsoText(const std::string& column);

// The full-text expression a `$text` searches and its GIN index is built on.
std::string TextVector(const std::string& column);

class PgDialect final : public sql::Dialect {
 public:
  // `schema`: the application's schema, quoted.
  explicit PgDialect(std::string schema) : schema_(std::move(schema)) {}

  const std::string& schema() const { return schema_; }

  std::string Quote(std::string_view identifier) const override { return QuoteName(identifier); }
  std::string Table(std::string_view cls) const override;
  std::string JoinTable(std::string_view field, std::string_view owner) const override;
  std::string Placeholder(std::size_t n) const override { return "$" + std::to_string(n); }
  const char* Bool(bool value) const override { return value ? "TRUE" : "FALSE"; }
  Cell TextList(const std::vector<std::string>& items) const override { return ArrayLiteral(items); }
  Cell NullList(const std::vector<std::string>& fields) const override { return ArrayLiteral(fields); }
  std::string TextIn(const std::string& expr, const std::vector<std::string>& items, sql::Binder& bind) const override;

  std::string ReadableBy(int alias, const std::vector<std::string>& principals, sql::Binder& bind) const override;
  std::string Scalar(const sql::FieldAt& field, const Cell& like, sql::Binder& bind) const override;
  std::string InList(const std::string& scalar, const sql::FieldAt& field, const std::vector<Cell>& values,
                     sql::Binder& bind) const override;
  std::string NotEmptyText(const std::string& scalar, const sql::FieldAt& field) const override;
  std::string HoldsNull(const sql::FieldAt& field, sql::Binder& bind) const override;
  std::string PathExists(const sql::FieldAt& field, bool present, sql::Binder& bind) const override;
  std::string AnyElement(const sql::FieldAt& field, schema::CompareOp op, const Cell& value,
                         sql::Binder& bind) const override;
  std::string AnyElementIn(const sql::FieldAt& field, const std::vector<Cell>& values, sql::Binder& bind) const override;
  std::string AllElements(const sql::FieldAt& field, const std::vector<Cell>& values, sql::Binder& bind) const override;
  std::string ContainedBy(const sql::FieldAt& field, const std::vector<Cell>& values, sql::Binder& bind) const override;
  std::string Regex(const sql::FieldAt& field, const std::string& pattern, sql::Binder& bind) const override;
  std::string Text(const sql::FieldAt& field, const std::vector<std::string>& terms, std::string_view cls,
                   sql::Binder& bind) const override;
  std::string Geo(const sql::FieldAt& field, schema::GeoShape shape, const std::vector<double>& numbers,
                  sql::Binder& bind) const override;
  std::string GeoDistance(const std::string& column, const std::string& latitude,
                          const std::string& longitude) const override;
  std::string Selected(const std::string& expr, schema::FieldType type) const override;
  std::string Accumulate(const schema::Accumulator& acc, const std::string& column, std::optional<schema::FieldType> type,
                         sql::Binder& bind) const override;

 private:
  // The field's JSON value: the column, or the value at its path (`#>`).
  std::string Json(const sql::FieldAt& field, sql::Binder& bind) const;

  std::string schema_;
};

}  // namespace crmd::storage::postgres
