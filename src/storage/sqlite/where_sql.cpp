#include "storage/sqlite/where_sql.hpp"

#include <fmt/format.h>

#include "storage/sqlite/class_tables.hpp"
#include "storage/sqlite/connection.hpp"
#include "util/json.hpp"

namespace crmd::storage::sqlite {

namespace {

using query::CompareOp;
using query::Expr;
using query::ExprKind;

const char* SqlOp(CompareOp op) {
  switch (op) {
    case CompareOp::kEq: return "=";
    case CompareOp::kNe: return "<>";
    case CompareOp::kLt: return "<";
    case CompareOp::kLte: return "<=";
    case CompareOp::kGt: return ">";
    case CompareOp::kGte: return ">=";
  }
  return "=";
}

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

class Compiler {
 public:
  explicit Compiler(SqlFragment& out) : out_(out) {}

  // Parameters are bound in the order their placeholders appear in the SQL text.
  void Where(const query::Query& q, int alias) {
    if (q.where) Emit(*q.where, alias, q);
    else out_.sql += "1";
    if (q.readable_by) out_.sql += " AND " + Acl(q, alias);
  }

 private:
  std::string Acl(const query::Query& q, int alias) {
    if (!q.readable_by) return {};
    boost::json::array principals;
    for (const auto& p : *q.readable_by) principals.emplace_back(p);
    out_.params.emplace_back(ToJson(principals));
    return fmt::format(
        "(t{0}._rperm IS NULL OR EXISTS (SELECT 1 FROM json_each(t{0}._rperm) AS p "
        "WHERE p.value IN (SELECT value FROM json_each(?))))",
        alias);
  }

  // The column expression of a field reference.
  std::string Column(const query::FieldRef& f, int alias) {
    if (f.column.empty()) return "NULL";
    std::string col = fmt::format("t{}.{}", alias, Quote(f.column));
    if (f.path.empty()) return col;
    std::string path = "$";
    for (const auto& part : f.path) path += ".\"" + part + "\"";
    out_.params.emplace_back(std::move(path));
    return "json_extract(" + col + ", ?)";
  }

  void Bind(Cell c) { out_.params.push_back(std::move(c)); }

  // `json_each(...)` over the field: the whole column, or the value at a path inside an Object
  // (json_each's own path argument, which yields no rows when the path is absent and one row for
  // a scalar, where json_each(json_extract(...)) would fail on a string).
  std::string JsonEach(const query::FieldRef& f, int alias) {
    std::string col = fmt::format("t{}.{}", alias, Quote(f.column));
    if (f.path.empty()) return "json_each(" + col + ")";
    std::string path = "$";
    for (const auto& part : f.path) path += ".\"" + part + "\"";
    out_.params.emplace_back(std::move(path));
    return "json_each(" + col + ", ?)";
  }

  // `NOT` over SQL's three-valued logic: an unknown inner result counts as false, so the negation
  // is true (Mongo: `$nin`, `$nor` and friends match documents lacking the field).
  void Not(const std::string& inner) { out_.sql += "NOT COALESCE(" + inner + ", 0)"; }

  void Group(const Expr& e, const char* joiner, const char* empty, int alias, const query::Query& q) {
    if (e.children.empty()) {
      out_.sql += empty;
      return;
    }
    out_.sql += "(";
    for (std::size_t i = 0; i < e.children.size(); ++i) {
      if (i) out_.sql += joiner;
      Emit(e.children[i], alias, q);
    }
    out_.sql += ")";
  }

  void Emit(const Expr& e, int alias, const query::Query& q) {
    switch (e.kind) {
      case ExprKind::kAnd: Group(e, " AND ", "1", alias, q); return;
      case ExprKind::kOr: Group(e, " OR ", "0", alias, q); return;
      case ExprKind::kNor: {
        std::string inner;
        {
          std::string saved;
          saved.swap(out_.sql);
          Group(e, " OR ", "0", alias, q);
          saved.swap(out_.sql);
          inner = std::move(saved);
        }
        Not(inner);
        return;
      }
      case ExprKind::kConst: out_.sql += e.flag ? "1" : "0"; return;
      case ExprKind::kCompare: Compare(e, alias); return;
      case ExprKind::kIn: In(e, alias); return;
      case ExprKind::kExists: Exists(e, alias); return;
      case ExprKind::kRegex: {
        if (e.field.column.empty()) {
          out_.sql += "0";
          return;
        }
        if (e.field.array) {
          std::string col = Column(e.field, alias);
          Bind(e.text);
          out_.sql += "EXISTS (SELECT 1 FROM json_each(" + col + ") AS e WHERE crmd_regexp(?, e.value))";
        } else {
          Bind(e.text);
          out_.sql += "crmd_regexp(?, " + Column(e.field, alias) + ")";
        }
        return;
      }
      case ExprKind::kAll: {
        if (e.values.empty() || e.field.column.empty()) {
          out_.sql += "0";
          return;
        }
        // Distinct values are counted by SQLite itself, so 1 and 1.0 count once, as they match.
        const std::string list = JsonList(e.values);
        std::string each = JsonEach(e.field, alias);
        Bind(list);
        Bind(list);
        out_.sql += "((SELECT count(DISTINCT e.value) FROM " + each +
                    " AS e WHERE e.value IN (SELECT value FROM json_each(?))) = "
                    "(SELECT count(DISTINCT value) FROM json_each(?)))";
        return;
      }
      case ExprKind::kContainedBy: {
        if (e.field.column.empty()) {
          out_.sql += "1";
          return;
        }
        std::string each = JsonEach(e.field, alias);
        Bind(JsonList(e.values));
        out_.sql += "NOT EXISTS (SELECT 1 FROM " + each +
                    " AS e WHERE e.value NOT IN (SELECT value FROM json_each(?)))";
        return;
      }
      case ExprKind::kText: {
        // The table name is the field's class; rowid links the FTS5 index to the row.
        Bind(FtsMatch(e));
        out_.sql += fmt::format("t{0}._rowid_ IN (SELECT rowid FROM {1} WHERE {1} MATCH ?)", alias,
                                Quote(TextIndexTable(table_for_text_)));
        return;
      }
      case ExprKind::kInQuery:
      case ExprKind::kSelect: {
        std::string col = Column(e.field, alias);
        const int sub_alias = ++next_alias_;
        std::string sub = fmt::format("{} IN (SELECT t{}.{} FROM {} AS t{} WHERE ", col, sub_alias,
                                      Quote(e.sub->key), Quote(e.sub->cls->name), sub_alias);
        query::Query sub_query;
        sub_query.readable_by = q.readable_by;
        if (e.sub->where) sub_query.where = Clone(*e.sub->where);
        std::string saved;
        saved.swap(out_.sql);
        std::string saved_table = table_for_text_;
        table_for_text_ = e.sub->cls->name;
        Where(sub_query, sub_alias);
        table_for_text_ = saved_table;
        saved.swap(out_.sql);
        sub += saved + ")";
        if (e.flag) Not(sub);
        else out_.sql += sub;
        return;
      }
      case ExprKind::kRelatedTo: {
        Bind(e.owner_id);
        out_.sql += fmt::format("(t{}.objectId IN (SELECT relatedId FROM {} WHERE owningId = ?)", alias,
                                JoinTable(e.text, e.owner_class));
        if (q.readable_by) {
          // The owner record must be readable too: a relation is part of its record (SECURITY.md,
          // second read path), so a hidden owner reveals no members.
          const int owner = ++next_alias_;
          Bind(e.owner_id);
          query::Query owner_query;
          owner_query.readable_by = q.readable_by;
          out_.sql += fmt::format(" AND EXISTS (SELECT 1 FROM {} AS t{} WHERE t{}.objectId = ? AND ",
                                  Quote(e.owner_class), owner, owner);
          out_.sql += Acl(owner_query, owner) + ")";
        }
        out_.sql += ")";
        return;
      }
    }
  }

  void Compare(const Expr& e, int alias) {
    const bool is_null = IsNull(e.value);
    if (e.field.array) {
      std::string col = Column(e.field, alias);
      if (is_null) {
        out_.sql += e.op == CompareOp::kNe ? fmt::format("{} IS NOT NULL", col)
                                           : e.op == CompareOp::kEq ? fmt::format("{} IS NULL", col)
                                                                    : std::string("0");
        return;
      }
      Bind(e.value);
      if (e.op == CompareOp::kNe)
        out_.sql += "NOT EXISTS (SELECT 1 FROM json_each(" + col + ") AS e WHERE e.value = ?)";
      else
        out_.sql += "EXISTS (SELECT 1 FROM json_each(" + col + ") AS e WHERE e.value " +
                    SqlOp(e.op) + " ?)";
      return;
    }
    std::string col = Column(e.field, alias);
    if (is_null) {
      out_.sql += e.op == CompareOp::kEq   ? col + " IS NULL"
                  : e.op == CompareOp::kNe ? col + " IS NOT NULL"
                                           : std::string("0");
      return;
    }
    if (e.op == CompareOp::kNe) {
      // Mongo's $ne also matches documents lacking the field. The column appears twice, so a
      // path parameter is bound twice.
      std::string col2 = Column(e.field, alias);
      Bind(e.value);
      out_.sql += "(" + col + " IS NULL OR " + col2 + " <> ?)";
      return;
    }
    Bind(e.value);
    out_.sql += col + " " + SqlOp(e.op) + " ?";
  }

  void In(const Expr& e, int alias) {
    if (e.values.empty() && !e.has_null) {
      out_.sql += e.flag ? "1" : "0";
      return;
    }
    std::string inner;
    {
      std::string saved;
      saved.swap(out_.sql);
      if (!e.values.empty()) {
        std::string col = Column(e.field, alias);
        Bind(JsonList(e.values));
        if (e.field.array)
          out_.sql += "EXISTS (SELECT 1 FROM json_each(" + col +
                      ") AS e WHERE e.value IN (SELECT value FROM json_each(?)))";
        else
          out_.sql += col + " IN (SELECT value FROM json_each(?))";
      }
      if (e.has_null) {
        std::string col2 = Column(e.field, alias);
        out_.sql += (e.values.empty() ? "" : " OR ") + col2 + " IS NULL";
      }
      saved.swap(out_.sql);
      inner = "(" + saved + ")";
    }
    if (e.flag) Not(inner);
    else out_.sql += inner;
  }

  void Exists(const Expr& e, int alias) {
    if (e.field.column.empty()) {
      out_.sql += e.flag ? "0" : "1";
      return;
    }
    // Spec §4.3: a null value counts as present; "" counts as neither present nor absent.
    if (!e.field.path.empty()) {
      // Inside an Object, json_type tells an explicit JSON null ('null') from a missing key (NULL).
      std::string type = JsonType(e.field, alias);
      if (!e.flag) {
        out_.sql += "(" + type + " IS NULL)";
        return;
      }
      std::string value = Column(e.field, alias);
      out_.sql += "(" + type + " IS NOT NULL AND coalesce(" + value + ", 1) <> '')";
      return;
    }
    std::string col = Column(e.field, alias);
    if (!e.flag) {
      if (e.field.tracks_nulls) {
        Bind(std::string(",") + e.field.column + ",");
        out_.sql += fmt::format("({} IS NULL AND instr(coalesce(t{}._nulls, ''), ?) = 0)", col, alias);
      } else {
        out_.sql += "(" + col + " IS NULL)";
      }
      return;
    }
    out_.sql += "((" + col + " IS NOT NULL AND " + col + " <> '')";
    if (e.field.tracks_nulls) {
      Bind(std::string(",") + e.field.column + ",");
      out_.sql += fmt::format(" OR instr(coalesce(t{}._nulls, ''), ?) > 0", alias);
    }
    out_.sql += ")";
  }

  std::string JsonType(const query::FieldRef& f, int alias) {
    std::string path = "$";
    for (const auto& part : f.path) path += ".\"" + part + "\"";
    out_.params.emplace_back(std::move(path));
    return fmt::format("json_type(t{}.{}, ?)", alias, Quote(f.column));
  }

  // FTS5's form of a $text: the field's column filter around the words, each a quoted string
  // (quotes doubled, so no word is read as syntax), any of them matching. The column is quoted:
  // a field may be named NOT.
  static std::string FtsMatch(const Expr& e) {
    std::string match;
    for (const auto& word : e.terms) {
      if (!match.empty()) match += " OR ";
      match.push_back('"');
      for (char c : word) {
        if (c == '"') match.push_back('"');
        match.push_back(c);
      }
      match.push_back('"');
    }
    return "{\"" + e.field.column + "\"} : (" + match + ")";
  }

  static Expr Clone(const Expr& e) {
    Expr c;
    c.kind = e.kind;
    c.flag = e.flag;
    c.field = e.field;
    c.op = e.op;
    c.value = e.value;
    c.values = e.values;
    c.has_null = e.has_null;
    c.text = e.text;
    c.terms = e.terms;
    c.owner_class = e.owner_class;
    c.owner_id = e.owner_id;
    c.sub = e.sub;
    for (const auto& child : e.children) c.children.push_back(Clone(child));
    return c;
  }

  SqlFragment& out_;
  int next_alias_ = 0;

 public:
  std::string table_for_text_;
};

}  // namespace

std::string TextIndexTable(const std::string& table) { return "fts:" + table; }

SqlFragment CompileWhere(const query::Query& query, const std::string& table) {
  SqlFragment out;
  Compiler compiler(out);
  compiler.table_for_text_ = table;
  compiler.Where(query, 0);
  return out;
}

}  // namespace crmd::storage::sqlite
