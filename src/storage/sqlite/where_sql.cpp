#include "storage/sqlite/where_sql.hpp"

#include <fmt/format.h>

#include "storage/sqlite/class_tables.hpp"
#include "storage/sqlite/connection.hpp"
#include "util/json.hpp"

namespace crmd::storage::sqlite {

namespace {

using schema::CompareOp;
using sql::SqlOp;
using sql::Binder;
using sql::FieldAt;

// A JSON array of the cells, bound once and read back with json_each: one statement shape for
// any list length, and no limit on host parameters.
std::string JsonList(const std::vector<Cell>& cells) {
  boost::json::array out;
  out.reserve(cells.size());
  for (const auto& c : cells) {
    if (const auto* i = std::get_if<std::int64_t>(&c)) out.emplace_back(*i);
    else if (const auto* d = std::get_if<double>(&c)) out.emplace_back(*d);
    else if (const auto* s = std::get_if<std::string>(&c)) out.emplace_back(*s);
  }
  return ToJson(out);
}

std::string JsonPath(const schema::FieldRef& f) {
  std::string path = "$";
  for (const auto& part : f.path) path += ".\"" + part + "\"";
  return path;
}

// A member of the JSON object in `column`: the path is crmd's constant, never client text.
std::string Member(const std::string& column, std::string_view name) {
  return fmt::format("json_extract({}, '$.{}')", column, name);
}

class Sqlite final : public sql::Dialect {
 public:
  std::string Quote(std::string_view identifier) const override { return sqlite::Quote(identifier); }
  std::string Table(std::string_view cls) const override { return sqlite::Quote(cls); }
  std::string JoinTable(std::string_view field, std::string_view owner) const override {
    return sqlite::JoinTable(field, owner);
  }
  void AppendQuoted(std::string_view identifier, std::string& out) const override { sqlite::AppendQuoted(identifier, out); }
  std::string Placeholder(std::size_t) const override { return "?"; }
  // A plain `?` after `?NNN` takes the largest number so far plus one, so the page's LIMIT and
  // OFFSET after a numbered order keep their places.
  std::string NumberedPlaceholder(std::size_t n) const override { return "?" + std::to_string(n); }
  const char* Bool(bool value) const override { return value ? "1" : "0"; }

  Cell TextList(const std::vector<std::string>& items) const override {
    boost::json::array list;
    list.reserve(items.size());
    for (const auto& item : items) list.emplace_back(item);
    return ToJson(list);
  }

  // `,a,b,`: every name between commas, so instr() finds `,a,` and never a name's part.
  Cell NullList(const std::vector<std::string>& fields) const override {
    std::string out = ",";
    for (const auto& field : fields) out += field + ",";
    return out;
  }

  std::string TextIn(const std::string& expr, const std::vector<std::string>& items, Binder& bind) const override {
    return fmt::format("{} IN (SELECT value FROM json_each({}))", expr, bind(TextList(items)));
  }

  std::string ReadableBy(int alias, const std::vector<std::string>& principals, Binder& bind) const override {
    const std::string placeholder = bind(TextList(principals));
    return fmt::format(
        "(t{0}._rperm IS NULL OR EXISTS (SELECT 1 FROM json_each(t{0}._rperm) AS p "
        "WHERE p.value IN (SELECT value FROM json_each({1}))))",
        alias, placeholder);
  }

  std::string Scalar(const FieldAt& f, const Cell&, Binder& bind) const override {
    if (f.ref.column.empty()) return "NULL";
    const std::string col = Column(f);
    if (f.ref.path.empty()) return col;
    return fmt::format("json_extract({}, {})", col, bind(JsonPath(f.ref)));
  }

  std::string InList(const std::string& scalar, const FieldAt&, const std::vector<Cell>& values,
                     Binder& bind) const override {
    return fmt::format("{} IN (SELECT value FROM json_each({}))", scalar, bind(JsonList(values)));
  }

  std::string NotEmptyText(const std::string& scalar, const FieldAt&) const override { return scalar + " <> ''"; }

  std::string HoldsNull(const FieldAt& f, Binder& bind) const override {
    return fmt::format("instr(coalesce(t{}._nulls, ''), {}) > 0", f.alias, bind("," + f.ref.column + ","));
  }

  std::string PathExists(const FieldAt& f, bool present, Binder& bind) const override {
    // json_type tells an explicit JSON null ('null') from a missing key (NULL).
    const std::string type = fmt::format("json_type({}, {})", Column(f), bind(JsonPath(f.ref)));
    if (!present) return "(" + type + " IS NULL)";
    const std::string value = Scalar(f, Cell(), bind);
    return fmt::format("({} IS NOT NULL AND coalesce({}, 1) <> '')", type, value);
  }

  std::string AnyElement(const FieldAt& f, CompareOp op, const Cell& value, Binder& bind) const override {
    const std::string col = Scalar(f, value, bind);
    return fmt::format("EXISTS (SELECT 1 FROM json_each({}) AS e WHERE e.value {} {})", col, SqlOp(op), bind(value));
  }

  std::string AnyElementIn(const FieldAt& f, const std::vector<Cell>& values, Binder& bind) const override {
    const std::string col = Scalar(f, values.front(), bind);
    return fmt::format("EXISTS (SELECT 1 FROM json_each({}) AS e WHERE e.value IN (SELECT value FROM json_each({})))",
                       col, bind(JsonList(values)));
  }

  std::string AllElements(const FieldAt& f, const std::vector<Cell>& values, Binder& bind) const override {
    // Distinct values are counted by SQLite itself, so 1 and 1.0 count once, as they match.
    const std::string list = JsonList(values);
    const std::string each = Each(f, bind);
    const std::string first = bind(list), second = bind(list);
    return fmt::format(
        "((SELECT count(DISTINCT e.value) FROM {} AS e WHERE e.value IN (SELECT value FROM json_each({}))) = "
        "(SELECT count(DISTINCT value) FROM json_each({})))",
        each, first, second);
  }

  std::string ContainedBy(const FieldAt& f, const std::vector<Cell>& values, Binder& bind) const override {
    const std::string each = Each(f, bind);
    return fmt::format("NOT EXISTS (SELECT 1 FROM {} AS e WHERE e.value NOT IN (SELECT value FROM json_each({})))",
                       each, bind(JsonList(values)));
  }

  std::string Regex(const FieldAt& f, const std::string& pattern, Binder& bind) const override {
    if (f.ref.array) {
      const std::string col = Scalar(f, Cell(), bind);
      return fmt::format("EXISTS (SELECT 1 FROM json_each({}) AS e WHERE crmd_regexp({}, e.value))", col, bind(pattern));
    }
    const std::string placeholder = bind(pattern);
    return fmt::format("crmd_regexp({}, {})", placeholder, Scalar(f, Cell(), bind));
  }

  // The GeoPoint's numbers are read from its stored JSON; the math is geo_functions.hpp's.
  std::string Geo(const FieldAt& f, schema::GeoShape shape, const std::vector<double>& n, Binder& bind) const override {
    const std::string col = Scalar(f, Cell(), bind);
    const std::string lat = Member(col, "latitude"), lng = Member(col, "longitude");
    switch (shape) {
      case schema::GeoShape::kNear:
      case schema::GeoShape::kCircle: {
        if (n.size() < 3) return "(" + col + " IS NOT NULL)";
        const std::string la = bind(Cell(n[0])), ln = bind(Cell(n[1]));
        const std::string distance = fmt::format("crmd_geo_distance({}, {}, {}, {})", lat, lng, la, ln);
        return fmt::format("({} <= {})", distance, bind(Cell(n[2])));
      }
      case schema::GeoShape::kBox: {
        const std::string lat_low = bind(Cell(std::min(n[0], n[2]))), lat_high = bind(Cell(std::max(n[0], n[2])));
        const std::string lng_low = bind(Cell(std::min(n[1], n[3]))), lng_high = bind(Cell(std::max(n[1], n[3])));
        return fmt::format("({} BETWEEN {} AND {} AND {} BETWEEN {} AND {})", lat, lat_low, lat_high, lng, lng_low,
                           lng_high);
      }
      case schema::GeoShape::kPolygon: {
        boost::json::array ring;
        for (std::size_t i = 0; i + 1 < n.size(); i += 2) ring.emplace_back(boost::json::array{n[i], n[i + 1]});
        return fmt::format("COALESCE(crmd_geo_in_polygon({}, {}, {}), 0)", lat, lng, bind(ToJson(ring)));
      }
      case schema::GeoShape::kHolds: {
        const std::string la = bind(Cell(n[0])), ln = bind(Cell(n[1]));
        return fmt::format("COALESCE(crmd_geo_polygon_holds({}, {}, {}), 0)", col, la, ln);
      }
    }
    return Bool(false);
  }

  std::string GeoDistance(const std::string& column, const std::string& latitude,
                          const std::string& longitude) const override {
    return fmt::format("crmd_geo_distance({}, {}, {}, {})", Member(column, "latitude"), Member(column, "longitude"),
                       latitude, longitude);
  }

  // A column's value is the cell as stored.
  std::string Selected(const std::string& expr, schema::FieldType) const override { return expr; }

  std::string Accumulate(const schema::Accumulator& acc, const std::string& column, std::optional<schema::FieldType>,
                         Binder& bind) const override {
    switch (acc.op) {
      case schema::AccumulatorOp::kSum:
        if (acc.column.empty()) return "COUNT(*) * " + bind(acc.constant);
        return "TOTAL(" + column + ")";  // 0.0 over no rows, where SUM is NULL
      case schema::AccumulatorOp::kAvg: return "AVG(" + column + ")";
      case schema::AccumulatorOp::kMin: return "MIN(" + column + ")";
      case schema::AccumulatorOp::kMax: return "MAX(" + column + ")";
      case schema::AccumulatorOp::kCount: return "COUNT(*)";
    }
    return "COUNT(*)";
  }

  std::string Text(const FieldAt& f, const std::vector<std::string>& terms, std::string_view cls,
                   Binder& bind) const override {
    // The rowid links the class's FTS5 index to the row.
    const std::string fts = sqlite::Quote(TextIndexTable(std::string(cls)));
    return fmt::format("t{0}._rowid_ IN (SELECT rowid FROM {1} WHERE {1} MATCH {2})", f.alias, fts,
                       bind(FtsMatch(f.ref.column, terms)));
  }

 private:
  static std::string Column(const FieldAt& f) { return fmt::format("t{}.{}", f.alias, sqlite::Quote(f.ref.column)); }

  // `json_each(...)` over the field: the whole column, or the value at a path inside an Object
  // (json_each's own path argument, which yields no rows when the path is absent and one row for
  // a scalar, where json_each(json_extract(...)) would fail on a string).
  static std::string Each(const FieldAt& f, Binder& bind) {
    if (f.ref.path.empty()) return "json_each(" + Column(f) + ")";
    return fmt::format("json_each({}, {})", Column(f), bind(JsonPath(f.ref)));
  }

  // FTS5's form of a $text: the field's column filter around the words, each a quoted string
  // (quotes doubled, so no word is read as syntax), any of them matching. The column is quoted:
  // a field may be named NOT.
  static std::string FtsMatch(const std::string& column, const std::vector<std::string>& terms) {
    std::string match;
    for (const auto& word : terms) {
      if (!match.empty()) match += " OR ";
      match.push_back('"');
      for (char c : word) {
        if (c == '"') match.push_back('"');
        match.push_back(c);
      }
      match.push_back('"');
    }
    return "{\"" + column + "\"} : (" + match + ")";
  }
};

}  // namespace

const sql::Dialect& SqliteDialect() {
  static const Sqlite dialect;
  return dialect;
}

std::string TextIndexTable(const std::string& table) { return "fts:" + table; }

SqlFragment CompileWhere(const schema::Query& query, const schema::ClassSchema& cls) {
  return sql::CompileWhere(SqliteDialect(), query, cls);
}

}  // namespace crmd::storage::sqlite
