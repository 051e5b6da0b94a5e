// The SQL tables of a class in an application's PostgreSQL schema, and how a schema change alters
// them. The layout is SQLite's (sqlite/class_tables.hpp) in PostgreSQL's types:
//   "objectId" text PRIMARY KEY, "createdAt"/"updatedAt" timestamptz, _acl jsonb (NULL = public),
//   _rperm/_wperm text[] (NULL = public), _nulls text[] (the fields holding an explicit null),
//   then one column per stored field, typed by ColumnSqlType (pg_dialect.hpp).
// Indexes: createdAt, updatedAt and every Pointer column, the declared `indexes`, and a GIN index
// on the tsvector of each text-indexed field (`text:<T>:<field>`). Relation fields:
// `_Join:<field>:<T>("owningId", "relatedId")`. A field whose phone numbers are looked up
// (Database::EnsurePhoneKeyIndex) has a hidden column `_phone:<field>` that crmd fills.
// DDL runs inside the caller's transaction (PostgreSQL's DDL is transactional).
#pragma once

#include <string>
#include <string_view>

#include "schema/class_schema.hpp"
#include "storage/postgres/connection.hpp"
#include "storage/postgres/pg_dialect.hpp"

namespace crmd::storage::postgres {

void CreateClassTables(Connection& c, const PgDialect& d, const schema::ClassSchema& cls);
void AlterClassTables(Connection& c, const PgDialect& d, const schema::ClassSchema& before,
                      const schema::ClassSchema& after);
void DropClassTables(Connection& c, const PgDialect& d, const schema::ClassSchema& cls);

// The hidden column of a field's phone keys (its name, and quoted), and its index.
std::string PhoneKeyName(std::string_view field);
std::string PhoneKeyColumn(std::string_view field);
std::string PhoneKeyIndex(std::string_view table, std::string_view field);

}  // namespace crmd::storage::postgres
