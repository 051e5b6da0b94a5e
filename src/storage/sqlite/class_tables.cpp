#include "storage/sqlite/class_tables.hpp"

#include <fmt/format.h>

#include <vector>

#include "storage/sql/index_rule.hpp"
#include "storage/sqlite/where_sql.hpp"

namespace crmd::storage::sqlite {

namespace {

std::string SqlType(schema::FieldType type) {
  switch (type) {
    case schema::FieldType::kNumber: return "NUMERIC";
    case schema::FieldType::kBoolean: return "INTEGER";
    case schema::FieldType::kString:
    case schema::FieldType::kHtml:
    case schema::FieldType::kDate:
    case schema::FieldType::kPointer:
    case schema::FieldType::kArray:
    case schema::FieldType::kObject:
    case schema::FieldType::kFile:
    case schema::FieldType::kPrivateFile:
    case schema::FieldType::kAcl:
    case schema::FieldType::kBytes:
    case schema::FieldType::kGeoPoint:
    case schema::FieldType::kPolygon:
    case schema::FieldType::kRelation: return "TEXT";
  }
  return "TEXT";
}

}  // namespace

std::string PhoneKeyIndexName(std::string_view table, std::string_view column) {
  return Quote(fmt::format("idx:{}:{}:phonekey", table, column));
}

namespace {

// An index of the index rule (storage/sql/index_rule.hpp).
void CreateIndex(Connection& c, std::string_view table, const sql::IndexSpec& index) {
  std::string columns;
  for (const auto& [column, descending] : index.columns)
    columns += (columns.empty() ? "" : ", ") + Quote(column) + (descending ? " DESC" : " ASC");
  std::string sql = fmt::format("CREATE INDEX IF NOT EXISTS {} ON {}({})", Quote(index.name), Quote(table), columns);
  if (index.set_only) sql += " WHERE " + Quote(index.columns.front().first) + " IS NOT NULL";
  c.Exec(sql);
}

std::string SqlString(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') out.push_back('\'');
    out.push_back(c);
  }
  out.push_back('\'');
  return out;
}

void DropTextIndex(Connection& c, const std::string& table_name) {
  for (const char* suffix : {":ai", ":ad", ":au"})
    c.Exec("DROP TRIGGER IF EXISTS " + Quote(TextIndexTable(table_name) + suffix));
  c.Exec("DROP TABLE IF EXISTS " + Quote(TextIndexTable(table_name)));
}

// Rebuilds the FTS5 table and its triggers for the class's text-indexed fields (after the old
// ones were dropped, see SaveClass).
void CreateTextIndex(Connection& c, const schema::ClassSchema& after) {
  const auto new_fields = sql::TextFields(after);
  const std::string table = Quote(after.name), fts = Quote(TextIndexTable(after.name));
  if (new_fields.empty()) return;
  std::string cols, new_vals, old_vals;
  for (const auto& f : new_fields) {
    cols += ", " + Quote(f);
    new_vals += ", new." + Quote(f);
    old_vals += ", old." + Quote(f);
  }
  // The row's number is `_rowid_`, never `rowid`: a class may declare a field named rowid, and
  // `rowid` (or `new.rowid`) would then be that field. Field names never start with `_`.
  c.Exec(fmt::format("CREATE VIRTUAL TABLE {} USING fts5({}, content={}, content_rowid='_rowid_', "
                     "tokenize='unicode61 remove_diacritics 2')",
                     fts, cols.substr(2), SqlString(after.name)));
  const std::string insert =
      fmt::format("INSERT INTO {}(rowid{}) VALUES (new._rowid_{});", fts, cols, new_vals);
  const std::string remove =
      fmt::format("INSERT INTO {0}({0}, rowid{1}) VALUES ('delete', old._rowid_{2});", fts, cols, old_vals);
  c.Exec(fmt::format("CREATE TRIGGER {} AFTER INSERT ON {} BEGIN {} END",
                     Quote(TextIndexTable(after.name) + ":ai"), table, insert));
  c.Exec(fmt::format("CREATE TRIGGER {} AFTER DELETE ON {} BEGIN {} END",
                     Quote(TextIndexTable(after.name) + ":ad"), table, remove));
  c.Exec(fmt::format("CREATE TRIGGER {} AFTER UPDATE OF {} ON {} BEGIN {} {} END",
                     Quote(TextIndexTable(after.name) + ":au"), cols.substr(2), table, remove, insert));
  c.Exec(fmt::format("INSERT INTO {0}({0}) VALUES ('rebuild')", fts));
}

void CreateJoinTables(Connection& c, const schema::ClassSchema& cls) {
  for (const auto& [field, def] : cls.fields)
    if (def.type == schema::FieldType::kRelation)
      c.Exec(fmt::format("CREATE TABLE IF NOT EXISTS {} (owningId TEXT NOT NULL, relatedId TEXT NOT NULL, "
                         "PRIMARY KEY (owningId, relatedId)) WITHOUT ROWID",
                         JoinTable(field, cls.name)));
}

}  // namespace

std::string JoinTable(std::string_view field, std::string_view owner) {
  return Quote(fmt::format("_Join:{}:{}", field, owner));
}

void CreateClassTables(Connection& c, const schema::ClassSchema& cls) {
  std::string sql = fmt::format(
      "CREATE TABLE {} (objectId TEXT PRIMARY KEY NOT NULL, createdAt TEXT NOT NULL, "
      "updatedAt TEXT NOT NULL, _acl TEXT, _rperm TEXT, _wperm TEXT, _nulls TEXT",
      Quote(cls.name));
  for (const auto& [name, def] : cls.fields)
    if (def.type != schema::FieldType::kRelation) sql += fmt::format(", {} {}", Quote(name), SqlType(def.type));
  sql += ")";
  c.Exec(sql);
  for (const auto& index : sql::ClassIndexes(cls)) CreateIndex(c, cls.name, index);
  CreateTextIndex(c, cls);
  CreateJoinTables(c, cls);
}

void AlterClassTables(Connection& c, const schema::ClassSchema& before, const schema::ClassSchema& after) {
  // Indexes first: SQLite refuses to drop a column an index or trigger still uses.
  const auto indexes = sql::DiffIndexes(before, after);
  for (const auto& name : indexes.drop) c.Exec("DROP INDEX IF EXISTS " + Quote(name));
  const bool text_changed = sql::TextFields(before) != sql::TextFields(after);
  if (text_changed) DropTextIndex(c, after.name);
  for (const auto& [name, def] : before.fields) {
    if (after.FindField(name)) continue;
    if (def.type == schema::FieldType::kRelation) {
      c.Exec("DROP TABLE IF EXISTS " + JoinTable(name, after.name));
      continue;
    }
    c.Exec("DROP INDEX IF EXISTS " + PhoneKeyIndexName(after.name, name));
    c.Exec(fmt::format("ALTER TABLE {} DROP COLUMN {}", Quote(after.name), Quote(name)));
  }
  for (const auto& [name, def] : after.fields)
    if (def.type != schema::FieldType::kRelation && !before.FindField(name))
      c.Exec(fmt::format("ALTER TABLE {} ADD COLUMN {} {}", Quote(after.name), Quote(name), SqlType(def.type)));
  if (text_changed) CreateTextIndex(c, after);
  for (const auto& index : indexes.create) CreateIndex(c, after.name, index);
  CreateJoinTables(c, after);
}

void DropClassTables(Connection& c, const schema::ClassSchema& cls) {
  DropTextIndex(c, cls.name);
  for (const auto& [field, def] : cls.fields)
    if (def.type == schema::FieldType::kRelation) c.Exec("DROP TABLE IF EXISTS " + JoinTable(field, cls.name));
  c.Exec("DROP TABLE IF EXISTS " + Quote(cls.name));
}

}  // namespace crmd::storage::sqlite
