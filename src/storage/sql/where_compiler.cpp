#include "storage/sql/where_compiler.hpp"

#include <fmt/format.h>

#include "schema/log_classes.hpp"

namespace crmd::storage::sql {

namespace {

using schema::CompareOp;
using schema::Expr;
using schema::ExprKind;

// The where's structure and meaning; the dialect spells the leaves. Strings that hold placeholders
// are built one after another, in text order: the operands of `+` are not sequenced.
class Compiler {
 public:
  Compiler(const Dialect& dialect, std::vector<Cell>& params) : d_(dialect), bind_(dialect, params) {}

  std::string Where(const schema::Query& q, const schema::ClassSchema& cls, int alias) {
    std::string sql = q.where ? Emit(*q.where, cls, alias, q) : std::string(d_.Bool(true));
    if (q.readable_by) {
      sql += " AND ";
      sql += d_.ReadableBy(alias, *q.readable_by, bind_);
    }
    if (q.history_of && cls.name == schema::kTimelineClass) {
      Expr of_classes;
      of_classes.kind = ExprKind::kIn;
      of_classes.flag = false;  // In's flag negates
      of_classes.field.column = "objectClass";
      for (const auto& name : *q.history_of) of_classes.values.emplace_back(name);
      sql += " AND " + Emit(of_classes, cls, alias, q);
    }
    return sql;
  }

 private:
  FieldAt At(const schema::FieldRef& ref, const schema::ClassSchema& cls, int alias) const {
    return FieldAt{ref, alias, ref.path.empty() ? ColumnType(cls, ref.column) : std::nullopt};
  }

  // `NOT` over SQL's three-valued logic: an unknown inner result counts as false, so the negation
  // is true (Mongo: `$nin`, `$nor` and friends match documents lacking the field).
  std::string Not(const std::string& inner) const {
    return fmt::format("NOT COALESCE({}, {})", inner, d_.Bool(false));
  }

  std::string Group(const Expr& e, const char* joiner, bool empty, const schema::ClassSchema& cls, int alias,
                    const schema::Query& q) {
    if (e.children.empty()) return d_.Bool(empty);
    std::string sql = "(";
    for (std::size_t i = 0; i < e.children.size(); ++i) {
      if (i) sql += joiner;
      sql += Emit(e.children[i], cls, alias, q);
    }
    return sql + ")";
  }

  std::string Emit(const Expr& e, const schema::ClassSchema& cls, int alias, const schema::Query& q) {
    const FieldAt field = At(e.field, cls, alias);
    const bool known = !e.field.column.empty();
    switch (e.kind) {
      case ExprKind::kAnd: return Group(e, " AND ", true, cls, alias, q);
      case ExprKind::kOr: return Group(e, " OR ", false, cls, alias, q);
      case ExprKind::kNor: return Not(Group(e, " OR ", false, cls, alias, q));
      case ExprKind::kConst: return d_.Bool(e.flag);
      case ExprKind::kCompare: return Compare(e, field);
      case ExprKind::kIn: return In(e, field);
      case ExprKind::kExists: return Exists(e, field);
      case ExprKind::kRegex: return known ? d_.Regex(field, e.text, bind_) : d_.Bool(false);
      case ExprKind::kAll: return e.values.empty() || !known ? d_.Bool(false) : d_.AllElements(field, e.values, bind_);
      case ExprKind::kContainedBy: return known ? d_.ContainedBy(field, e.values, bind_) : d_.Bool(true);
      case ExprKind::kText: return d_.Text(field, e.terms, cls.name, bind_);
      case ExprKind::kInQuery:
      case ExprKind::kSelect: return SubQuery(e, field, q);
      case ExprKind::kRelatedTo: return RelatedTo(e, alias, q);
      case ExprKind::kHoldsAny:
      case ExprKind::kHoldsAll: return Holds(e, cls, alias);
      case ExprKind::kGeo: return known ? d_.Geo(field, e.geo, e.numbers, bind_) : d_.Bool(false);
    }
    return d_.Bool(false);
  }

  std::string SubQuery(const Expr& e, const FieldAt& field, const schema::Query& q) {
    std::string sql = d_.Scalar(field, std::string(), bind_);
    const int sub = ++next_alias_;
    sql += fmt::format(" IN (SELECT t{0}.{1} FROM {2} AS t{0} WHERE ", sub, d_.Quote(e.sub->key),
                       d_.Table(e.sub->cls->name));
    schema::Query sub_query;
    sub_query.readable_by = q.readable_by;
    sub_query.history_of = q.history_of;
    if (e.sub->where) sub_query.where = Clone(*e.sub->where);
    sql += Where(sub_query, *e.sub->cls, sub) + ")";
    return e.flag ? Not(sql) : sql;
  }

  std::string RelatedTo(const Expr& e, int alias, const schema::Query& q) {
    const std::string owner_id = bind_(e.owner_id);
    std::string sql = fmt::format("(t{}.{} IN (SELECT {} FROM {} WHERE {} = {})", alias, d_.Quote("objectId"),
                                  d_.Quote("relatedId"), d_.JoinTable(e.text, e.owner_class), d_.Quote("owningId"),
                                  owner_id);
    if (q.readable_by) {
      // The owner record must be readable too: a relation is part of its record (SECURITY.md,
      // second read path), so a hidden owner reveals no members.
      const int owner = ++next_alias_;
      const std::string id_again = bind_(e.owner_id);
      sql += fmt::format(" AND EXISTS (SELECT 1 FROM {0} AS t{1} WHERE t{1}.{2} = {3} AND ", d_.Table(e.owner_class),
                         owner, d_.Quote("objectId"), id_again);
      sql += d_.ReadableBy(owner, *q.readable_by, bind_) + ")";
    }
    return sql + ")";
  }

  // What the row's Relation holds, from its join table. The rows are already the ones the caller
  // may read; a related record's own ACL hides nothing here, as in Parse (the client named it).
  std::string Holds(const Expr& e, const schema::ClassSchema& cls, int alias) {
    schema::FieldRef related;
    related.column = "relatedId";
    const FieldAt related_at{related, 0, schema::FieldType::kString};
    const std::string table = d_.JoinTable(e.field.column, cls.name);
    if (e.kind == ExprKind::kHoldsAny) {
      std::string sql = fmt::format("t{}.{} IN (SELECT {} FROM {} WHERE ", alias, d_.Quote("objectId"),
                                    d_.Quote("owningId"), table);
      sql += d_.InList(d_.Quote("relatedId"), related_at, e.values, bind_) + ")";
      return e.flag ? Not(sql) : sql;
    }
    // The join table's key is (owningId, relatedId): counting the matches counts distinct ids.
    std::string sql = fmt::format("(SELECT COUNT(*) FROM {} WHERE {} = t{}.{} AND ", table, d_.Quote("owningId"), alias,
                                  d_.Quote("objectId"));
    sql += d_.InList(d_.Quote("relatedId"), related_at, e.values, bind_);
    const std::string count = bind_(Cell(static_cast<std::int64_t>(e.values.size())));
    return sql + ") = " + count;
  }

  std::string Compare(const Expr& e, const FieldAt& field) {
    const bool is_null = IsNull(e.value);
    if (e.field.array) {
      if (is_null) {
        const std::string col = d_.Scalar(field, e.value, bind_);
        return e.op == CompareOp::kNe   ? col + " IS NOT NULL"
               : e.op == CompareOp::kEq ? col + " IS NULL"
                                        : std::string(d_.Bool(false));
      }
      if (e.op == CompareOp::kNe) return "NOT " + d_.AnyElement(field, CompareOp::kEq, e.value, bind_);
      return d_.AnyElement(field, e.op, e.value, bind_);
    }
    if (e.field.column.empty()) {
      // An undeclared field is absent: null, never equal to a value, different from every one.
      if (is_null) return d_.Bool(e.op == CompareOp::kEq);
      return d_.Bool(e.op == CompareOp::kNe);
    }
    const std::string col = d_.Scalar(field, e.value, bind_);
    if (is_null) {
      return e.op == CompareOp::kEq   ? col + " IS NULL"
             : e.op == CompareOp::kNe ? col + " IS NOT NULL"
                                      : std::string(d_.Bool(false));
    }
    if (e.op == CompareOp::kNe) {
      // Mongo's $ne also matches documents lacking the field.
      const std::string col2 = d_.Scalar(field, e.value, bind_);
      const std::string value = bind_(e.value);
      return fmt::format("({} IS NULL OR {} <> {})", col, col2, value);
    }
    const std::string value = bind_(e.value);
    return fmt::format("{} {} {}", col, SqlOp(e.op), value);
  }

  std::string In(const Expr& e, const FieldAt& field) {
    if (e.values.empty() && !e.has_null) return d_.Bool(e.flag);
    if (e.field.column.empty()) return d_.Bool(e.has_null != e.flag);
    std::string inner = "(";
    if (!e.values.empty()) {
      if (e.field.array) {
        inner += d_.AnyElementIn(field, e.values, bind_);
      } else {
        const std::string col = d_.Scalar(field, e.values.front(), bind_);
        inner += d_.InList(col, field, e.values, bind_);
      }
    }
    if (e.has_null) {
      const std::string col = d_.Scalar(field, Cell(), bind_);
      inner += (e.values.empty() ? "" : " OR ") + col + " IS NULL";
    }
    inner += ")";
    return e.flag ? Not(inner) : inner;
  }

  std::string Exists(const Expr& e, const FieldAt& field) {
    if (e.field.column.empty()) return d_.Bool(!e.flag);
    // Spec §4.3: a null value counts as present; "" counts as neither present nor absent.
    if (!e.field.path.empty()) return d_.PathExists(field, e.flag, bind_);
    const std::string col = d_.Scalar(field, Cell(), bind_);
    if (!e.flag) {
      if (!e.field.tracks_nulls) return "(" + col + " IS NULL)";
      return fmt::format("({} IS NULL AND NOT {})", col, d_.HoldsNull(field, bind_));
    }
    std::string sql = "((" + col + " IS NOT NULL";
    if (const std::string text = d_.NotEmptyText(col, field); !text.empty()) sql += " AND " + text;
    sql += ")";
    if (e.field.tracks_nulls) sql += " OR " + d_.HoldsNull(field, bind_);
    return sql + ")";
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
    c.geo = e.geo;
    c.numbers = e.numbers;
    for (const auto& child : e.children) c.children.push_back(Clone(child));
    return c;
  }

  const Dialect& d_;
  Binder bind_;
  int next_alias_ = 0;
};

}  // namespace

std::optional<schema::FieldType> ColumnType(const schema::ClassSchema& cls, std::string_view column) {
  if (column == "objectId") return schema::FieldType::kString;
  if (column == "createdAt" || column == "updatedAt") return schema::FieldType::kDate;
  if (const auto* def = cls.FindField(column)) return def->type;
  return std::nullopt;
}

SqlFragment CompileWhere(const Dialect& dialect, const schema::Query& query, const schema::ClassSchema& cls) {
  SqlFragment out;
  out.sql = CompileWhere(dialect, query, cls, out.params);
  return out;
}

std::string CompileWhere(const Dialect& dialect, const schema::Query& query, const schema::ClassSchema& cls,
                         std::vector<Cell>& params) {
  Compiler compiler(dialect, params);
  return compiler.Where(query, cls, 0);
}

std::string CompileOrder(const Dialect& dialect, const schema::Query& query, std::vector<Cell>& params) {
  if (query.order.empty() && query.nearest) {
    // Numbered placeholders: the order follows the where's values and, on SQLite, is written twice.
    params.emplace_back(query.nearest->latitude);
    const std::string latitude = dialect.NumberedPlaceholder(params.size());
    params.emplace_back(query.nearest->longitude);
    const std::string longitude = dialect.NumberedPlaceholder(params.size());
    const std::string column = "t0." + dialect.Quote(query.nearest->column);
    return " ORDER BY " + dialect.GeoDistance(column, latitude, longitude) + " ASC, t0." + dialect.Quote("createdAt") +
           " ASC, t0." + dialect.Quote("objectId") + " ASC";
  }
  std::string sql;
  bool has_created = false, has_id = false;
  for (std::size_t i = 0; i < query.order.size(); ++i) {
    sql += i ? ", " : " ORDER BY ";
    sql += "t0." + dialect.Quote(query.order[i].first) + (query.order[i].second ? " DESC" : " ASC");
    has_created = has_created || query.order[i].first == "createdAt";
    has_id = has_id || query.order[i].first == "objectId";
  }
  if (sql.empty() || has_id) return sql;
  const char* direction = query.order.back().second ? " DESC" : " ASC";
  if (!has_created) sql += ", t0." + dialect.Quote("createdAt") + direction;
  return sql + ", t0." + dialect.Quote("objectId") + direction;
}

}  // namespace crmd::storage::sql
