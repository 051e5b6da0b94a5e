// The SQL tables of a class in an application's SQLite store, and how a schema change alters them.
//
// Layout (one SQL table per class, named by the class):
//   objectId TEXT PRIMARY KEY, createdAt TEXT, updatedAt TEXT,   -- canonical ISO text
//   _acl TEXT (ACL JSON or NULL = public), _rperm/_wperm TEXT (JSON arrays of principals with
//   read/write, NULL = public), _nulls TEXT (",f1,f2," the fields holding an explicit null),
//   then one column per stored field in schema order, typed by SqlType (schema/codec.hpp encodes).
// Indexes: createdAt, updatedAt and every Pointer column, plus the class's declared `indexes`
// (`uidx:<T>:<name>`); text-indexed fields live in an external-content FTS5 table `fts:<T>` kept
// in step by triggers. Relation fields: `_Join:<field>:<T>(owningId, relatedId)`. Rowids link FTS5
// to rows, so class tables are never VACUUMed.
//
// All functions run DDL on `c`, inside the caller's write transaction, and throw StorageError.
#pragma once

#include <string>
#include <string_view>

#include "schema/class_schema.hpp"
#include "storage/sqlite/connection.hpp"

namespace crmd::storage::sqlite {

// The quoted name of the join table of Relation `field` of class `owner`.
std::string JoinTable(std::string_view field, std::string_view owner);

// The table, indexes, text index and join tables of a new class.
void CreateClassTables(Connection& c, const schema::ClassSchema& cls);

// The index on crmd_phone_key(column) (Database::EnsurePhoneKeyIndex), quoted.
std::string PhoneKeyIndexName(std::string_view table, std::string_view column);
// Brings a class's tables from `before` to `after`: dropped fields, indexes and relations first
// (SQLite refuses to drop a column an index or trigger still uses), then the added ones.
void AlterClassTables(Connection& c, const schema::ClassSchema& before, const schema::ClassSchema& after);
// Everything CreateClassTables and AlterClassTables made for the class.
void DropClassTables(Connection& c, const schema::ClassSchema& cls);

}  // namespace crmd::storage::sqlite
