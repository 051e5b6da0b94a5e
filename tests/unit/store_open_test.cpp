// What opening a store costs (issue 33, cold tenants): a SQLite store opened to be read opens no
// writer connection, whose first statement would parse the whole SQLite schema a second time and
// hold a second descriptor, until its first write; and each distinct class definition is read
// once per process, shared by every store that has it.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "storage/class_definitions.hpp"
#include "storage/database.hpp"
#include "storage/read_deadline.hpp"
#include "storage/sqlite/sqlite_store.hpp"
#include "temp_dir.hpp"
#include "util/json.hpp"

namespace crmd::storage {
namespace {

// Descriptors of this process open on `file`.
int DescriptorsOn(const std::string& file) {
  int n = 0;
  const auto target = std::filesystem::canonical(file);
  for (const auto& fd : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    if (std::filesystem::read_symlink(fd.path(), ec) == target) ++n;
  }
  return n;
}

schema::ClassSchema Things() {
  schema::ClassSchema cls;
  cls.name = "Things";
  cls.fields = {{"A", {schema::FieldType::kString, {}}}};
  return cls;
}

void Make(const std::string& path) {
  auto db = OpenSqlite(path, Durability::kNormal, 2);
  auto txn = db->BeginWrite(/*exclusive=*/true);
  txn->SaveClass(nullptr, Things());
  txn->Commit();
}

TEST(SqliteOpenTest, AStoreOpenedToBeReadHoldsOneConnectionUntilItsFirstWrite) {
  test::TempDir dir("store-open");
  const std::string path = dir.File("data.db");
  Make(path);
  auto db = OpenSqlite(path, Durability::kNormal, 2);
  const auto classes = db->LoadSchema();
  ASSERT_EQ(classes.size(), 1u);
  schema::Query query;
  EXPECT_EQ(db->Count(*classes[0], query), 0);
  EXPECT_EQ(DescriptorsOn(path), 1);  // the reader's

  Row row;
  row.object_id = "t1";
  row.created_at = row.updated_at = "2026-01-01T00:00:00.000Z";
  row.cells = {std::string("a")};
  auto txn = db->BeginWrite();
  txn->Insert(*classes[0], {"A"}, row);
  txn->Commit();
  EXPECT_EQ(DescriptorsOn(path), 2);  // and now the writer's
  EXPECT_EQ(db->Count(*classes[0], query), 1);  // the cached count retired by the first commit
}

TEST(SqliteOpenTest, ANewFileGetsCrmdsTablesAtOnce) {
  test::TempDir dir("store-new");
  const std::string path = dir.File("data.db");
  {
    auto db = OpenSqlite(path, Durability::kNormal, 2);
    EXPECT_TRUE(db->LoadSchema().empty());
    EXPECT_TRUE(db->ReadOutbox(0, 10).empty());
  }
  auto again = OpenSqlite(path, Durability::kNormal, 2);
  EXPECT_TRUE(again->LoadSchema().empty());
  EXPECT_EQ(DescriptorsOn(path), 1);
}

// A store of this many classes has ~4 sqlite_schema rows each: a scan of them runs far past the
// steps after which a read looks at its deadline.
constexpr int kManyClasses = 300;

schema::ClassSchema Thing(int i) {
  auto cls = Things();
  cls.name += std::to_string(i);
  return cls;
}

TEST(SqliteOpenTest, OpeningLooksTablesAndIndexesUpWithoutReadingTheSchemaTable) {
  test::TempDir dir("store-lookups");
  const std::string path = dir.File("data.db");
  {
    auto db = OpenSqlite(path, Durability::kNormal, 2);
    {
      auto txn = db->BeginWrite(/*exclusive=*/true);
      for (int i = 0; i < kManyClasses; ++i) txn->SaveClass(nullptr, Thing(i));
      txn->Commit();
    }
    EXPECT_TRUE(db->EnsurePhoneKeyIndex(Thing(0), "A"));
  }
  // Issue 33: a cold open's checks are lookups in the schema SQLite parsed, not statements that
  // step through every table and index; a deadline already passed stops any such statement.
  const ReadDeadline passed(std::chrono::steady_clock::now() - std::chrono::seconds(1));
  auto db = OpenSqlite(path, Durability::kNormal, 2);
  EXPECT_EQ(DescriptorsOn(path), 1);  // found up to date: no writer opened
  EXPECT_FALSE(db->EnsurePhoneKeyIndex(Thing(0), "A"));  // there
  EXPECT_TRUE(db->EnsurePhoneKeyIndex(Thing(1), "A"));  // not there: made by the writer
}

TEST(ClassDefinitionsTest, StoresThatDefineAClassAlikeShareOneDefinition) {
  test::TempDir dir("definitions");
  Make(dir.File("a.db"));
  Make(dir.File("b.db"));
  auto a = OpenSqlite(dir.File("a.db"), Durability::kNormal, 2)->LoadSchema();
  auto b = OpenSqlite(dir.File("b.db"), Durability::kNormal, 2)->LoadSchema();
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(a[0].get(), b[0].get());

  const std::string text = crmd::ToJson(Things().ToJson());  // plus a space: another text, read apart
  EXPECT_NE(ReadClassDefinition(text + " ", "test").get(), a[0].get());
  EXPECT_EQ(ReadClassDefinition(text + " ", "test").get(), ReadClassDefinition(text + " ", "test").get());
}

TEST(ClassDefinitionsTest, AnUnreadableDefinitionIsTheStoresFault) {
  EXPECT_THROW(ReadClassDefinition("{\"className\":", "test"), StorageError);
  EXPECT_THROW(ReadClassDefinition("[]", "test"), StorageError);
  EXPECT_THROW(ReadClassDefinition("{\"fields\":7}", "test"), StorageError);
}

}  // namespace
}  // namespace crmd::storage
