#include "storage/sql/aggregate_statements.hpp"

#include "storage/sql/where_compiler.hpp"

namespace crmd::storage::sql {

SqlFragment AggregateRows(const Dialect& d, const schema::ClassSchema& cls, const schema::AggregatePlan& plan) {
  SqlFragment out;
  Binder bind(d, out.params);
  const std::string key_column = "t0." + d.Quote(plan.key_column);
  const std::string key =
      plan.key_column.empty()
          ? std::string("NULL")
          : d.Selected(key_column, ColumnType(cls, plan.key_column).value_or(schema::FieldType::kString));
  const std::string table = d.Table(cls.name);
  if (plan.distinct) {
    const std::string where = CompileWhere(d, plan.query, cls, out.params);
    out.sql = "SELECT DISTINCT " + key + " FROM " + table + " AS t0 WHERE (" + where + ") AND " + key_column +
              " IS NOT NULL";
    return out;
  }
  out.sql = "SELECT " + key;
  for (const auto& acc : plan.accumulators) {
    out.sql += ", ";
    out.sql += d.Accumulate(acc, "t0." + d.Quote(acc.column), ColumnType(cls, acc.column), bind);
  }
  out.sql += " FROM " + table + " AS t0 WHERE ";
  out.sql += CompileWhere(d, plan.query, cls, out.params);
  if (!plan.key_column.empty()) out.sql += " GROUP BY 1";
  return out;
}

}  // namespace crmd::storage::sql
