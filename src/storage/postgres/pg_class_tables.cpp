#include "storage/postgres/pg_class_tables.hpp"

#include <fmt/format.h>

#include "storage/sql/index_rule.hpp"

namespace crmd::storage::postgres {

namespace {

std::string TextIndexName(std::string_view table, std::string_view field) {
  return QuoteName(fmt::format("text:{}:{}", table, field));
}

void CreateIndex(Connection& c, const PgDialect& d, std::string_view table, const sql::IndexSpec& index) {
  std::string columns;
  for (const auto& [column, descending] : index.columns)
    columns += (columns.empty() ? "" : ", ") + QuoteName(column) + (descending ? " DESC" : " ASC");
  std::string sql = fmt::format("CREATE INDEX IF NOT EXISTS {} ON {} ({})", QuoteName(index.name), d.Table(table), columns);
  if (index.set_only) sql += " WHERE " + QuoteName(index.columns.front().first) + " IS NOT NULL";
  c.Exec(sql);
}

void DropIndex(Connection& c, const PgDialect& d, const std::string& quoted_name) {
  c.Exec("DROP INDEX IF EXISTS " + d.schema() + "." + quoted_name);
}

void CreateTextIndexes(Connection& c, const PgDialect& d, const schema::ClassSchema& cls,
                       const std::vector<std::string>& fields) {
  for (const auto& field : fields)
    c.Exec(fmt::format("CREATE INDEX IF NOT EXISTS {} ON {} USING gin ({})", TextIndexName(cls.name, field),
                       d.Table(cls.name), TextVector(QuoteName(field))));
}

void CreateJoinTables(Connection& c, const PgDialect& d, const schema::ClassSchema& cls) {
  for (const auto& [field, def] : cls.fields)
    if (def.type == schema::FieldType::kRelation)
      c.Exec(fmt::format("CREATE TABLE IF NOT EXISTS {} (\"owningId\" text NOT NULL, \"relatedId\" text NOT NULL, "
                         "PRIMARY KEY (\"owningId\", \"relatedId\"))",
                         d.JoinTable(field, cls.name)));
}

}  // namespace

std::string PhoneKeyName(std::string_view field) { return fmt::format("_phone:{}", field); }

std::string PhoneKeyColumn(std::string_view field) { return QuoteName(PhoneKeyName(field)); }

std::string PhoneKeyIndex(std::string_view table, std::string_view field) {
  return QuoteName(fmt::format("idx:{}:{}:phonekey", table, field));
}

void CreateClassTables(Connection& c, const PgDialect& d, const schema::ClassSchema& cls) {
  std::string sql = fmt::format(
      "CREATE TABLE {} (\"objectId\" text PRIMARY KEY, \"createdAt\" timestamptz NOT NULL, "
      "\"updatedAt\" timestamptz NOT NULL, _acl jsonb, _rperm text[], _wperm text[], _nulls text[]",
      d.Table(cls.name));
  for (const auto& [name, def] : cls.fields)
    if (def.type != schema::FieldType::kRelation) sql += fmt::format(", {} {}", QuoteName(name), ColumnSqlType(def.type));
  c.Exec(sql + ")");
  for (const auto& index : sql::ClassIndexes(cls)) CreateIndex(c, d, cls.name, index);
  CreateTextIndexes(c, d, cls, sql::TextFields(cls));
  CreateJoinTables(c, d, cls);
}

void AlterClassTables(Connection& c, const PgDialect& d, const schema::ClassSchema& before,
                      const schema::ClassSchema& after) {
  const auto indexes = sql::DiffIndexes(before, after);
  for (const auto& name : indexes.drop) DropIndex(c, d, QuoteName(name));
  const auto text_before = sql::TextFields(before), text_after = sql::TextFields(after);
  for (const auto& field : text_before)
    if (std::find(text_after.begin(), text_after.end(), field) == text_after.end())
      DropIndex(c, d, TextIndexName(after.name, field));
  const std::string table = d.Table(after.name);
  for (const auto& [name, def] : before.fields) {
    if (after.FindField(name)) continue;
    if (def.type == schema::FieldType::kRelation) {
      c.Exec("DROP TABLE IF EXISTS " + d.JoinTable(name, after.name));
      continue;
    }
    // Its indexes go with the column.
    c.Exec(fmt::format("ALTER TABLE {} DROP COLUMN IF EXISTS {}, DROP COLUMN IF EXISTS {}", table, QuoteName(name),
                       PhoneKeyColumn(name)));
  }
  for (const auto& [name, def] : after.fields)
    if (def.type != schema::FieldType::kRelation && !before.FindField(name))
      c.Exec(fmt::format("ALTER TABLE {} ADD COLUMN {} {}", table, QuoteName(name), ColumnSqlType(def.type)));
  CreateTextIndexes(c, d, after, text_after);
  for (const auto& index : indexes.create) CreateIndex(c, d, after.name, index);
  CreateJoinTables(c, d, after);
}

void DropClassTables(Connection& c, const PgDialect& d, const schema::ClassSchema& cls) {
  for (const auto& [field, def] : cls.fields)
    if (def.type == schema::FieldType::kRelation) c.Exec("DROP TABLE IF EXISTS " + d.JoinTable(field, cls.name));
  c.Exec("DROP TABLE IF EXISTS " + d.Table(cls.name));
}

}  // namespace crmd::storage::postgres
