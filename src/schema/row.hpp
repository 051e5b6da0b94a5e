// What storage reads and writes: rows of cells. A cell is an SQL value; what it means (a Date, a
// Pointer id, a JSON document) is decided by the class schema in schema/codec, never here. Value
// types every layer shares, at the bottom of the layers (DESIGN.md); storage names them too
// (storage/row.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace crmd::schema {

// SQL NULL, INTEGER, REAL or TEXT.
using Cell = std::variant<std::monostate, std::int64_t, double, std::string>;

inline bool IsNull(const Cell& c) { return std::holds_alternative<std::monostate>(c); }

// One record as stored. Invariant: `cells` is aligned with the column list it was read or written
// with (a RowSet's `columns`, or the `columns` argument of a write).
struct Row {
  std::string object_id;
  std::string created_at;  // canonical ISO form, so text order is time order
  std::string updated_at;
  std::optional<std::string> acl;  // the ACL as JSON text; absent means public
  // Fields holding an explicit JSON null (their cell is SQL NULL too). Absent and null differ:
  // spec §4.3 `$exists` counts null as present.
  std::vector<std::string> nulls;
  std::vector<Cell> cells;
};

struct RowSet {
  std::vector<std::string> columns;
  std::vector<Row> rows;
};

struct ClassSchema;  // schema/class_schema.hpp

// The declared columns of a class in storage order: every field but Relations.
std::vector<std::string> StoredColumns(const ClassSchema& cls);

// The cell of `field` in a row read with StoredColumns(cls); NULL when the class lacks it.
Cell CellOf(const ClassSchema& cls, const Row& row, std::string_view field);
std::string TextOf(const ClassSchema& cls, const Row& row, std::string_view field);

}  // namespace crmd::schema
