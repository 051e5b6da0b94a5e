#include "storage/postgres/pg_dialect.hpp"

#include <fmt/format.h>

#include <cctype>

#include "util/ids.hpp"
#include "util/json.hpp"

namespace crmd::storage::postgres {

namespace {

using schema::CompareOp;
using sql::SqlOp;
using schema::FieldType;
using sql::Binder;
using sql::FieldAt;

constexpr std::size_t kMaxIdentifier = 63;  // NAMEDATALEN - 1

bool IsNumber(const Cell& c) { return std::holds_alternative<std::int64_t>(c) || std::holds_alternative<double>(c); }

std::string CellText(const Cell& c) {
  if (const auto* i = std::get_if<std::int64_t>(&c)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&c)) return fmt::format("{}", *d);
  if (const auto* s = std::get_if<std::string>(&c)) return *s;
  return {};
}

// The values of a list split by kind: a JSON element or path value is compared as a number with
// numbers and as text with texts (as SQLite's json_each yields them).
struct Kinds {
  std::vector<std::string> numbers, texts;
};
Kinds Split(const std::vector<Cell>& values) {
  Kinds out;
  for (const auto& v : values) (IsNumber(v) ? out.numbers : out.texts).push_back(CellText(v));
  return out;
}

// The SQL scalar of a JSON value `json` for values like `like`.
std::string JsonScalar(const std::string& json, const Cell& like) {
  if (IsNumber(like)) return "crmd.num(" + json + ")";
  if (std::holds_alternative<std::string>(like)) return "crmd.txt(" + json + ")";
  return "NULLIF(" + json + ", 'null'::jsonb)";
}

// `json`'s number or text is one of the list's: false, not unknown, when it is neither.
std::string JsonIn(const std::string& json, const Kinds& kinds, Binder& bind) {
  std::string sql = "(";
  if (!kinds.numbers.empty())
    sql += fmt::format("COALESCE(crmd.num({}) = ANY({}::float8[]), FALSE)", json, bind(ArrayLiteral(kinds.numbers)));
  if (!kinds.texts.empty()) {
    if (!kinds.numbers.empty()) sql += " OR ";
    sql += fmt::format("COALESCE(crmd.txt({}) = ANY({}::text[]), FALSE)", json, bind(ArrayLiteral(kinds.texts)));
  }
  return sql + ")";
}

bool IsJsonType(FieldType type) {
  switch (type) {
    case FieldType::kArray:
    case FieldType::kObject:
    case FieldType::kFile:
    case FieldType::kPrivateFile:
    case FieldType::kAcl:
    case FieldType::kGeoPoint:
    case FieldType::kPolygon: return true;
    default: return false;
  }
}

// ARE's spelling of the three assertions of the portable form whose RE2 spelling it lacks or
// reads otherwise (`\b` is a backspace in ARE, `\B` a backslash, `(?m:` no group): lookarounds
// on ASCII word characters, and on line breaks.
constexpr std::string_view kWordBoundary =
    "(?:(?<![0-9A-Za-z_])(?=[0-9A-Za-z_])|(?<=[0-9A-Za-z_])(?![0-9A-Za-z_]))";
constexpr std::string_view kNotWordBoundary =
    "(?:(?<=[0-9A-Za-z_])(?=[0-9A-Za-z_])|(?<![0-9A-Za-z_])(?![0-9A-Za-z_]))";
constexpr std::string_view kLineStart = "(?:^|(?<=\\n))";
constexpr std::string_view kLineEnd = "(?:$|(?=\\n))";

// The portable form's `\x{HH}` (a control character) at `x` (its `x`), as ARE's `\UHHHHHHHH`:
// ARE's `\x` would take the hex digits after it too, and `\u0001` is what the connection escapes
// U+0001 as. Returns where the escape ends.
std::size_t AppendControl(const std::string& portable, std::size_t x, std::string& out) {
  const std::size_t close = portable.find('}', x);
  if (portable.compare(x, 2, "x{") != 0 || close == std::string::npos) {
    out += "\\x";
    return x;
  }
  out += "\\U" + std::string(8 - std::min<std::size_t>(8, close - x - 2), '0') + portable.substr(x + 2, close - x - 2);
  return close;
}

// A `$regex` in the query layer's portable form (query/portable_regex.hpp: RE2 syntax, each
// construct meaning the same in ARE but for the assertions above) in ARE syntax. Its leading
// `(?s)` is ARE's embedded option for the same (`.` is any character, `^` and `$` the text's
// ends); classes are copied whole, their `\` escapes included.
std::string PgPattern(const std::string& portable) {
  std::string out;
  out.reserve(portable.size() + 16);
  for (std::size_t i = 0; i < portable.size(); ++i) {
    const char c = portable[i];
    if (c == '\\' && i + 1 < portable.size()) {
      const char next = portable[++i];
      if (next == 'b') out += kWordBoundary;
      else if (next == 'B') out += kNotWordBoundary;
      else if (next == 'x') i = AppendControl(portable, i, out);
      else out.append({c, next});
    } else if (c == '[') {
      // To the class's unescaped `]`: the portable form escapes a `]` inside it.
      out.push_back(c);
      while (++i < portable.size() && portable[i] != ']') {
        if (portable[i] == '\\' && i + 1 < portable.size() && portable[i + 1] == 'x') {
          i = AppendControl(portable, i + 1, out);
          continue;
        }
        if (portable[i] == '\\' && i + 1 < portable.size()) out.push_back(portable[i++]);
        out.push_back(portable[i]);
      }
      if (i < portable.size()) out.push_back(']');
    } else if (portable.compare(i, 6, "(?m:^)") == 0) {
      out += kLineStart;
      i += 5;
    } else if (portable.compare(i, 6, "(?m:$)") == 0) {
      out += kLineEnd;
      i += 5;
    } else {
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace

std::string ShortName(std::string_view identifier) {
  std::string name(identifier);
  if (name.size() > kMaxIdentifier) name = name.substr(0, kMaxIdentifier - 17) + "~" + ids::HashSecret(identifier).substr(0, 16);
  return name;
}

std::string QuoteName(std::string_view identifier) {
  const std::string name = ShortName(identifier);
  std::string out = "\"";
  for (char c : name) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  return out + "\"";
}

std::string ArrayLiteral(const std::vector<std::string>& items) {
  std::string out = "{";
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out.push_back(',');
    out.push_back('"');
    for (char c : items[i]) {
      if (c == '"' || c == '\\') out.push_back('\\');
      out.push_back(c);
    }
    out.push_back('"');
  }
  return out + "}";
}

std::string ColumnSqlType(FieldType type) {
  switch (type) {
    case FieldType::kNumber: return "double precision";
    case FieldType::kBoolean: return "boolean";
    case FieldType::kDate: return "timestamptz";
    case FieldType::kString:
    case FieldType::kHtml:
    case FieldType::kPointer:
    case FieldType::kBytes:
    case FieldType::kRelation: return "text";
    case FieldType::kArray:
    case FieldType::kObject:
    case FieldType::kFile:
    case FieldType::kPrivateFile:
    case FieldType::kAcl:
    case FieldType::kGeoPoint:
    case FieldType::kPolygon: return "jsonb";
  }
  return "text";
}

std::string IsoText(const std::string& column) {
  return fmt::format("to_char({}, 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')", column);
}

std::string TextVector(const std::string& column) {
  return "to_tsvector('simple'::regconfig, COALESCE(" + column + ", ''))";
}

std::string PgDialect::Table(std::string_view cls) const { return schema_ + "." + QuoteName(cls); }

std::string PgDialect::JoinTable(std::string_view field, std::string_view owner) const {
  return schema_ + "." + QuoteName(fmt::format("_Join:{}:{}", field, owner));
}

// A GeoPoint's number: the value is crmd's canonical object (schema/geo_value.hpp).
static std::string GeoMember(const std::string& column, std::string_view name) {
  return fmt::format("(({})->>'{}')::float8", column, name);
}

// The haversine of util/geo_math.cpp in SQL, so that both stores draw the same circles.
std::string PgDialect::GeoDistance(const std::string& column, const std::string& latitude,
                                   const std::string& longitude) const {
  const std::string lat = GeoMember(column, "latitude"), lng = GeoMember(column, "longitude");
  return fmt::format(
      "(2 * asin(sqrt(LEAST(1.0, power(sin(radians(({2})::float8 - {0}) / 2), 2) + "
      "cos(radians({0})) * cos(radians(({2})::float8)) * power(sin(radians(({3})::float8 - {1}) / 2), 2)))))",
      lat, lng, latitude, longitude);
}

// Polygons are PostgreSQL's own `polygon` (latitude as x), whose `@>` counts a point on an edge
// or a corner as inside, as geo::InPolygon does.
std::string PgDialect::Geo(const FieldAt& f, schema::GeoShape shape, const std::vector<double>& n,
                           Binder& bind) const {
  const std::string col = fmt::format("t{}.{}", f.alias, QuoteName(f.ref.column));
  switch (shape) {
    case schema::GeoShape::kNear:
    case schema::GeoShape::kCircle: {
      if (n.size() < 3) return "(" + col + " IS NOT NULL)";
      const std::string la = bind(Cell(n[0])), ln = bind(Cell(n[1]));
      const std::string distance = GeoDistance(col, la, ln);
      return fmt::format("({} <= {}::float8)", distance, bind(Cell(n[2])));
    }
    case schema::GeoShape::kBox: {
      const std::string lat_low = bind(Cell(std::min(n[0], n[2]))), lat_high = bind(Cell(std::max(n[0], n[2])));
      const std::string lng_low = bind(Cell(std::min(n[1], n[3]))), lng_high = bind(Cell(std::max(n[1], n[3])));
      return fmt::format("({} BETWEEN {}::float8 AND {}::float8 AND {} BETWEEN {}::float8 AND {}::float8)",
                         GeoMember(col, "latitude"), lat_low, lat_high, GeoMember(col, "longitude"), lng_low, lng_high);
    }
    case schema::GeoShape::kPolygon: {
      std::string ring = "(";
      for (std::size_t i = 0; i + 1 < n.size(); i += 2)
        ring += (i ? ",(" : "(") + FormatNumber(n[i]) + "," + FormatNumber(n[i + 1]) + ")";
      ring += ")";
      return fmt::format("COALESCE({}::polygon @> point({}, {}), FALSE)", bind(Cell(ring)), GeoMember(col, "latitude"),
                         GeoMember(col, "longitude"));
    }
    case schema::GeoShape::kHolds: {
      const std::string la = bind(Cell(n[0])), ln = bind(Cell(n[1]));
      return fmt::format("COALESCE(translate(({}->'coordinates')::text, '[]', '()')::polygon @> point({}::float8, {}::float8), FALSE)",
                         col, la, ln);
    }
  }
  return Bool(false);
}

// Dates as crmd's ISO text and booleans as 0 and 1, the cells SQLite's store returns.
std::string PgDialect::Selected(const std::string& expr, FieldType type) const {
  switch (type) {
    case FieldType::kDate: return IsoText(expr);
    case FieldType::kBoolean: return expr + "::int";
    default: return expr;
  }
}

std::string PgDialect::Accumulate(const schema::Accumulator& acc, const std::string& column,
                                  std::optional<FieldType> type, Binder& bind) const {
  // Booleans count as 0 and 1 (as SQLite stores them); dates compare as dates. Sums and averages
  // are float8, as SQLite's are REAL, whatever numeric type PostgreSQL would give them.
  const std::string value = type == FieldType::kBoolean ? column + "::int" : column;
  switch (acc.op) {
    case schema::AccumulatorOp::kSum:
      if (acc.column.empty()) return "COUNT(*) * " + bind(acc.constant) + "::float8";
      return "COALESCE(SUM(" + value + ")::float8, 0)";
    case schema::AccumulatorOp::kAvg: return "AVG(" + value + ")::float8";
    case schema::AccumulatorOp::kMin: return Selected("MIN(" + value + ")", type == FieldType::kDate ? FieldType::kDate : FieldType::kString);
    case schema::AccumulatorOp::kMax: return Selected("MAX(" + value + ")", type == FieldType::kDate ? FieldType::kDate : FieldType::kString);
    case schema::AccumulatorOp::kCount: return "COUNT(*)";
  }
  return "COUNT(*)";
}

std::string PgDialect::TextIn(const std::string& expr, const std::vector<std::string>& items, Binder& bind) const {
  return fmt::format("{} = ANY({}::text[])", expr, bind(ArrayLiteral(items)));
}

std::string PgDialect::ReadableBy(int alias, const std::vector<std::string>& principals, Binder& bind) const {
  return fmt::format("(t{0}._rperm IS NULL OR t{0}._rperm && {1}::text[])", alias, bind(ArrayLiteral(principals)));
}

std::string PgDialect::Json(const FieldAt& f, Binder& bind) const {
  const std::string col = fmt::format("t{}.{}", f.alias, QuoteName(f.ref.column));
  if (f.ref.path.empty()) return col;
  return fmt::format("({} #> {}::text[])", col, bind(ArrayLiteral(f.ref.path)));
}

std::string PgDialect::Scalar(const FieldAt& f, const Cell& like, Binder& bind) const {
  if (f.ref.column.empty()) return "NULL";
  if (!f.ref.path.empty()) return JsonScalar(Json(f, bind), like);
  const std::string col = fmt::format("t{}.{}", f.alias, QuoteName(f.ref.column));
  // Booleans are stored as such and compared as the query layer encodes them: 0 and 1.
  if (f.type == FieldType::kBoolean) return "(" + col + ")::int";
  return col;
}

std::string PgDialect::InList(const std::string& scalar, const FieldAt& f, const std::vector<Cell>& values,
                              Binder& bind) const {
  if (!f.ref.path.empty()) return JsonIn(Json(f, bind), Split(values), bind);
  std::vector<std::string> items;
  for (const auto& v : values) items.push_back(CellText(v));
  std::string type = "text";
  if (f.type == FieldType::kNumber) type = "float8";
  else if (f.type == FieldType::kBoolean) type = "int";
  else if (f.type == FieldType::kDate) type = "timestamptz";
  else if (f.type && IsJsonType(*f.type)) type = "jsonb";
  return fmt::format("{} = ANY({}::{}[])", scalar, bind(ArrayLiteral(items)), type);
}

std::string PgDialect::NotEmptyText(const std::string& scalar, const FieldAt& f) const {
  if (f.type == FieldType::kString || f.type == FieldType::kHtml || f.type == FieldType::kPointer)
    return scalar + " <> ''";
  return {};
}

std::string PgDialect::HoldsNull(const FieldAt& f, Binder& bind) const {
  return fmt::format("{}::text = ANY(COALESCE(t{}._nulls, '{{}}'))", bind(f.ref.column), f.alias);
}

std::string PgDialect::PathExists(const FieldAt& f, bool present, Binder& bind) const {
  const std::string json = Json(f, bind);
  if (!present) return "(" + json + " IS NULL)";
  return fmt::format("({0} IS NOT NULL AND {0} <> '\"\"'::jsonb)", json);
}

std::string PgDialect::AnyElement(const FieldAt& f, CompareOp op, const Cell& value, Binder& bind) const {
  const std::string json = Json(f, bind);
  return fmt::format("EXISTS (SELECT 1 FROM crmd.elements({}) AS e(v) WHERE {} {} {})", json, JsonScalar("e.v", value),
                     SqlOp(op), bind(CellText(value)));
}

std::string PgDialect::AnyElementIn(const FieldAt& f, const std::vector<Cell>& values, Binder& bind) const {
  const std::string json = Json(f, bind);
  return fmt::format("EXISTS (SELECT 1 FROM crmd.elements({}) AS e(v) WHERE {})", json, JsonIn("e.v", Split(values), bind));
}

std::string PgDialect::AllElements(const FieldAt& f, const std::vector<Cell>& values, Binder& bind) const {
  const std::string json = Json(f, bind);
  const Kinds kinds = Split(values);
  // Every wanted value has an equal element; one statement shape for any list.
  return fmt::format(
      "(NOT EXISTS (SELECT 1 FROM unnest({1}::float8[]) AS w(x) WHERE NOT EXISTS "
      "(SELECT 1 FROM crmd.elements({0}) AS e(v) WHERE crmd.num(e.v) = w.x)) AND "
      "NOT EXISTS (SELECT 1 FROM unnest({2}::text[]) AS w(x) WHERE NOT EXISTS "
      "(SELECT 1 FROM crmd.elements({0}) AS e(v) WHERE crmd.txt(e.v) = w.x)))",
      json, bind(ArrayLiteral(kinds.numbers)), bind(ArrayLiteral(kinds.texts)));
}

std::string PgDialect::ContainedBy(const FieldAt& f, const std::vector<Cell>& values, Binder& bind) const {
  const std::string json = Json(f, bind);
  const Kinds kinds = Split(values);
  if (values.empty())
    return fmt::format("NOT EXISTS (SELECT 1 FROM crmd.elements({}) AS e(v) WHERE jsonb_typeof(e.v) <> 'null')", json);
  // A JSON null element is not held against the list (SQLite's NOT IN is unknown for it).
  return fmt::format("NOT EXISTS (SELECT 1 FROM crmd.elements({}) AS e(v) WHERE jsonb_typeof(e.v) <> 'null' AND NOT {})",
                     json, JsonIn("e.v", kinds, bind));
}

std::string PgDialect::Regex(const FieldAt& f, const std::string& pattern, Binder& bind) const {
  if (f.ref.array) {
    const std::string json = Json(f, bind);
    return fmt::format("EXISTS (SELECT 1 FROM crmd.elements({}) AS e(v) WHERE jsonb_typeof(e.v) = 'string' AND e.v #>> '{{}}' ~ {})",
                       json, bind(PgPattern(pattern)));
  }
  const std::string value = Scalar(f, std::string(), bind);
  return fmt::format("{} ~ {}", value, bind(PgPattern(pattern)));
}

std::string PgDialect::Text(const FieldAt& f, const std::vector<std::string>& terms, std::string_view,
                            Binder& bind) const {
  // Each term a quoted lexeme (quotes doubled, so none is read as tsquery syntax), any matching.
  std::string query;
  for (const auto& term : terms) {
    if (!query.empty()) query += " | ";
    query.push_back('\'');
    for (char c : term) {
      if (c == '\'' || c == '\\') query.push_back(c == '\'' ? '\'' : '\\');
      query.push_back(c);
    }
    query.push_back('\'');
  }
  const std::string col = fmt::format("t{}.{}", f.alias, QuoteName(f.ref.column));
  return fmt::format("{} @@ to_tsquery('simple'::regconfig, {})", TextVector(col), bind(query));
}

}  // namespace crmd::storage::postgres
