// The `where` AST (with the list query around it): value types every layer shares, at the bottom
// of the layers (DESIGN.md); query/ builds them, storage compiles them. What query/where_parser.cpp builds from a request's JSON and the class schema,
// and what each storage dialect compiles to SQL. Values are already typed cells; names are
// already resolved against the schema, so nothing here is raw client text.
//
// Grammar:
//   Expr := And(Expr+) | Or(Expr+) | Nor(Expr+) | Const(true|false)
//         | Compare(Field, =|<>|<|<=|>|>=, Cell)       null-aware: `= null` is IS NULL
//         | In(Field, Cell*, has_null, negated)
//         | Exists(Field, bool)                        spec §4.3: null present, "" neither
//         | Regex(Field, pattern)                      query/portable_regex.hpp's form, flags folded in
//         | All(Field, Cell*) | ContainedBy(Field, Cell*)        array fields
//         | Text(Field, term*)                          any of the words; needs a text index on the field
//         | InQuery(Field, SubQuery, negated)          Field IN (SELECT objectId FROM sub ...)
//         | Select(Field, SubQuery, negated)           Field IN (SELECT key FROM sub ...)
//         | RelatedTo(owner class, owner id, relation key)
//         | HoldsAny(Relation field, id+, negated)    the row's relation holds one of the ids
//         | HoldsAll(Relation field, id+)             ... holds every one of them
//         | Geo(Field, shape, number+)                 a GeoPoint near/in a box/polygon/circle, or a
//                                                    Polygon holding a point (GeoShape says which)
// Array fields compare element-wise (Mongo semantics): `tags = "a"` means "contains a".
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "schema/class_schema.hpp"
#include "schema/row.hpp"

namespace crmd::schema {

enum class ExprKind {
  kAnd,
  kOr,
  kNor,
  kConst,
  kCompare,
  kIn,
  kExists,
  kRegex,
  kAll,
  kContainedBy,
  kText,
  kInQuery,
  kSelect,
  kRelatedTo,
  kHoldsAny,
  kHoldsAll,
  kGeo,
};

// What a Geo expression tests, and what its numbers are (degrees; distances in radians):
//   kNear    (GeoPoint field) {lat, lng} or {lat, lng, max}: within max of the point (any distance
//            without max); `$nearSphere` also sorts (Query::nearest)
//   kCircle  (GeoPoint field) {lat, lng, max}: `$centerSphere`, the same test without the sort
//   kBox     (GeoPoint field) {lat, lng, lat, lng}: two opposite corners, in either order
//   kPolygon (GeoPoint field) {lat, lng, lat, lng, ...}: inside the ring, edges included
//   kHolds   (Polygon field)  {lat, lng}: the stored polygon holds the point, edges included
enum class GeoShape { kNear, kCircle, kBox, kPolygon, kHolds };

// Nearest first: the order of a `$nearSphere` query that names no other (Parse).
struct NearestFirst {
  std::string column;
  double latitude = 0;
  double longitude = 0;
};

enum class CompareOp { kEq, kNe, kLt, kLte, kGt, kGte };

// A resolved field reference.
struct FieldRef {
  // A builtin column (objectId, createdAt, updatedAt) or a declared field; empty when the class
  // does not declare the field, which then reads as absent everywhere (never an error).
  std::string column;
  // JSON path inside an Object field (`Meta.a.b` -> {"a","b"}); empty for the whole value.
  std::vector<std::string> path;
  // Element-wise semantics: the field is an Array (and no path is used).
  bool array = false;
  // Whether explicit nulls of this field are tracked (declared fields, whole value).
  bool tracks_nulls = false;
};

struct Expr;

struct SubQuery {
  std::shared_ptr<const ClassSchema> cls;
  std::unique_ptr<Expr> where;  // null: every row
  std::string key;              // the selected column (objectId for $inQuery)
};

struct Expr {
  ExprKind kind = ExprKind::kConst;
  std::vector<Expr> children;        // And, Or, Nor
  bool flag = true;                  // Const value, Exists value, In/InQuery/Select/HoldsAny negation
  FieldRef field;
  CompareOp op = CompareOp::kEq;
  Cell value;               // Compare (monostate: null)
  std::vector<Cell> values; // In, All, ContainedBy (never monostate); Holds: distinct ids
  bool has_null = false;             // In: the list held null
  std::string text;                  // Regex pattern; RelatedTo key
  std::vector<std::string> terms;    // Text: the words, any of which matches (never empty)
  std::string owner_class, owner_id; // RelatedTo
  std::shared_ptr<SubQuery> sub;     // InQuery, Select
  GeoShape geo = GeoShape::kNear;    // Geo
  std::vector<double> numbers;       // Geo: the shape's numbers (GeoShape)

  static Expr Const(bool value) {
    Expr e;
    e.kind = ExprKind::kConst;
    e.flag = value;
    return e;
  }
};

// `column = value` on a builtin or declared column: for internal lookups (sessions, logins).
inline Expr FieldEquals(std::string column, Cell value) {
  Expr e;
  e.kind = ExprKind::kCompare;
  e.field.column = std::move(column);
  e.value = std::move(value);
  return e;
}

// The automaton memory one `$regex` pattern may compile to (RE2), wherever it is compiled: the
// query's parser and SQLite's regexp function. RE2's default is 8 MiB; with 1 MiB a hostile
// pattern's automaton no longer fit and RE2 fell back to its slow matcher (a 16-pattern read over
// 8 MB: 20 s against 0.6 s), with 4 MiB it takes 0.7 s.
inline constexpr std::int64_t kRegexMemory = 4 << 20;

// A list query as storage runs it.
struct Query {
  std::optional<Expr> where;
  std::vector<std::pair<std::string, bool>> order;  // column, descending
  std::int64_t limit = 100;
  std::int64_t skip = 0;
  // Record ACL hook (permissions issue): when set, only rows that are public (no ACL) or whose
  // read list names one of these principals are visible, in the main query and in sub-queries.
  std::optional<std::vector<std::string>> readable_by;
  // With readable_by, for `_Timeline` (in the main query and in sub-queries): only the rows whose
  // `objectClass` is one of these, the classes whose records the caller may get (issue 31 #8;
  // query/visibility.hpp).
  std::optional<std::vector<std::string>> history_of;
  // When `order` is empty: the rows nearest this point of the GeoPoint column first.
  std::optional<NearestFirst> nearest;
};

// The point a top-level `$nearSphere` of `where` sorts by (one under $or or $nor sorts nothing).
std::optional<NearestFirst> NearSort(const Expr& where);

}  // namespace crmd::schema
