// A store in a fresh temp directory (SQLite) or a new PostgreSQL database (test_store.hpp) holding
// one class, Rows (createdBy, updatedBy and a Number N), for the tests of the store's write paths:
// commit groups, write groups, the count cache.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "schema/class_schema.hpp"
#include "storage/sqlite/sqlite_store.hpp"
#include "storage/database.hpp"
#include "temp_dir.hpp"
#include "test_store.hpp"
#include "util/time.hpp"

namespace crmd::test {

class RowsStore {
 public:
  explicit RowsStore(const std::string& tag, const std::string& kind = "sqlite") : dir_(tag) {
    db = OpenTestStore(kind, dir_, 4);
    cls = schema::ClassSchema::NewImplicit("Rows");
    cls.fields.emplace_back("N", schema::FieldDef{schema::FieldType::kNumber, {}});
    auto txn = db->BeginWrite(/*exclusive=*/true);
    txn->SaveClass(nullptr, cls);
    txn->Commit();
  }

  static storage::Row NewRow(const std::string& id, std::int64_t n = 0) {
    storage::Row row;
    row.object_id = id;
    row.created_at = row.updated_at = timeutil::NowIso();
    row.cells = {std::monostate{}, std::monostate{}, n};
    return row;
  }

  // Inserts a row in a write of its own (begun in `group` when given), committed unless `commit`
  // is false; returns whether the write said it was exclusive.
  bool Insert(const std::string& id, std::int64_t n = 0, bool exclusive = false, bool commit = true,
              storage::WriteGroup* group = nullptr) {
    auto txn = group ? group->BeginWrite(exclusive) : db->BeginWrite(exclusive);
    txn->Insert(cls, storage::StoredColumns(cls), NewRow(id, n));
    if (commit) txn->Commit();
    return txn->Exclusive();
  }

  bool Visible(const std::string& id) { return db->Get(cls, id).has_value(); }

 private:
  TempDir dir_;  // before db: removed after the store is closed

 public:
  std::unique_ptr<storage::Database> db;
  schema::ClassSchema cls;
};

}  // namespace crmd::test
