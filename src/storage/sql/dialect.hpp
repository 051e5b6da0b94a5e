// What differs between the SQL of the stores (issue 22): how a dialect spells a table, a
// placeholder, a truth value, an ACL check, and every operation on a JSON value (an Array's
// elements, a path inside an Object, a text search). The where compiler (where_compiler.hpp) holds
// what does not differ: the query's structure and its semantics ($ne matching absent fields, NOT
// over three-valued logic, null counting as present, sub-queries and relations under the ACL).
//
// Every method returns SQL text and binds its values through the Binder, in the order their
// placeholders appear in that text (SQLite's `?` are positional).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "schema/aggregate_plan.hpp"
#include "schema/query.hpp"
#include "schema/class_schema.hpp"
#include "storage/row.hpp"

namespace crmd::storage::sql {

struct SqlFragment {
  std::string sql;
  std::vector<Cell> params;  // in placeholder order
};

class Dialect;

// Appends parameters to a fragment and answers their placeholders.
class Binder {
 public:
  Binder(const Dialect& dialect, std::vector<Cell>& params) : dialect_(dialect), params_(params) {}
  std::string operator()(Cell value);

 private:
  const Dialect& dialect_;
  std::vector<Cell>& params_;
};

// A field of a row of the query: the table alias (`t<alias>`), the reference, and the declared
// type when the field is a whole declared or builtin column (nullopt for a path or an unknown name).
struct FieldAt {
  const schema::FieldRef& ref;
  int alias;
  std::optional<schema::FieldType> type;
};

class Dialect {
 public:
  virtual ~Dialect() = default;

  virtual std::string Quote(std::string_view identifier) const = 0;
  // Quote() appended to `out`: the statements that name every column of a row are built on
  // every write.
  virtual void AppendQuoted(std::string_view identifier, std::string& out) const { out += Quote(identifier); }
  // The quoted name of a table of the store: a class's, or one of crmd's own (`_crmd_schema`,
  // `_crmd_outbox`); and the join table of a class's Relation `field`.
  virtual std::string Table(std::string_view cls) const = 0;
  virtual std::string JoinTable(std::string_view field, std::string_view owner) const = 0;
  // The placeholder of the n-th parameter (1-based).
  virtual std::string Placeholder(std::size_t n) const = 0;
  // The n-th parameter's placeholder that names its number, for a text that repeats it or places
  // it after other placeholders (SQLite's `?NNN`; PostgreSQL's are all numbered).
  virtual std::string NumberedPlaceholder(std::size_t n) const { return Placeholder(n); }
  virtual const char* Bool(bool value) const = 0;

  // A list of texts as one column holds it and one parameter binds it: the principals of
  // `_rperm`/`_wperm` (what ReadableBy reads), the ids of TextIn.
  virtual Cell TextList(const std::vector<std::string>& items) const = 0;
  // The `_nulls` column of a row whose `fields` (not empty) hold an explicit null: what
  // HoldsNull searches.
  virtual Cell NullList(const std::vector<std::string>& fields) const = 0;
  // `expr` is one of `items`, bound as one list: the statement's text is the same for any length.
  virtual std::string TextIn(const std::string& expr, const std::vector<std::string>& items, Binder& bind) const = 0;

  // Rows whose ACL grants read to one of `principals`, or that have none (public).
  virtual std::string ReadableBy(int alias, const std::vector<std::string>& principals, Binder& bind) const = 0;
  // The field's value as an SQL scalar comparable with values like `like` (monostate: only
  // tested for NULL, which a missing path and a JSON null both are).
  virtual std::string Scalar(const FieldAt& field, const Cell& like, Binder& bind) const = 0;
  // `scalar` (Scalar() of `field` for values like these) is one of `values` (never empty, no null).
  virtual std::string InList(const std::string& scalar, const FieldAt& field, const std::vector<Cell>& values,
                             Binder& bind) const = 0;
  // `scalar` is not the empty text; empty when the field cannot hold text.
  virtual std::string NotEmptyText(const std::string& scalar, const FieldAt& field) const = 0;
  // The row's explicit-null list names the field.
  virtual std::string HoldsNull(const FieldAt& field, Binder& bind) const = 0;
  // A path inside an Object: the key is there (a JSON null counts, "" does not), or it is absent.
  virtual std::string PathExists(const FieldAt& field, bool present, Binder& bind) const = 0;

  // Element-wise over an Array field (or the value at a path): some element compares `op` to
  // `value` (kNe is never asked: the compiler negates kEq), some element is one of `values`,
  // every one of `values` is an element, every element is one of `values`.
  virtual std::string AnyElement(const FieldAt& field, schema::CompareOp op, const Cell& value, Binder& bind) const = 0;
  virtual std::string AnyElementIn(const FieldAt& field, const std::vector<Cell>& values, Binder& bind) const = 0;
  virtual std::string AllElements(const FieldAt& field, const std::vector<Cell>& values, Binder& bind) const = 0;
  virtual std::string ContainedBy(const FieldAt& field, const std::vector<Cell>& values, Binder& bind) const = 0;

  // The text value (or, for an Array, some text element) matches the RE2 pattern.
  virtual std::string Regex(const FieldAt& field, const std::string& pattern, Binder& bind) const = 0;
  // Any of `terms` is a word of the field, through the text index of class `cls`.
  virtual std::string Text(const FieldAt& field, const std::vector<std::string>& terms, std::string_view cls,
                           Binder& bind) const = 0;

  // Geo tests (schema/query.hpp's GeoShape and its numbers) on a GeoPoint or Polygon column.
  virtual std::string Geo(const FieldAt& field, schema::GeoShape shape, const std::vector<double>& numbers,
                          Binder& bind) const = 0;
  // The distance in radians between the GeoPoint in `column` (SQL of the stored value) and the
  // point of the SQL numbers `latitude` and `longitude` (placeholders or literals); NULL for none.
  virtual std::string GeoDistance(const std::string& column, const std::string& latitude,
                                  const std::string& longitude) const = 0;

  // `expr`, a value of a column of `type`, as a result column whose text is the store's cell of it.
  virtual std::string Selected(const std::string& expr, schema::FieldType type) const = 0;
  // `acc` over `column` (`t0.<name>`, nullopt `type` for a name the class lacks), its constant
  // (a `$sum` of no column) bound.
  virtual std::string Accumulate(const schema::Accumulator& acc, const std::string& column,
                                 std::optional<schema::FieldType> type, Binder& bind) const = 0;
};

// The SQL operator of a comparison (the same in every dialect).
inline const char* SqlOp(schema::CompareOp op) {
  switch (op) {
    case schema::CompareOp::kEq: return "=";
    case schema::CompareOp::kNe: return "<>";
    case schema::CompareOp::kLt: return "<";
    case schema::CompareOp::kLte: return "<=";
    case schema::CompareOp::kGt: return ">";
    case schema::CompareOp::kGte: return ">=";
  }
  return "=";
}

inline std::string Binder::operator()(Cell value) {
  params_.push_back(std::move(value));
  return dialect_.Placeholder(params_.size());
}

}  // namespace crmd::storage::sql
