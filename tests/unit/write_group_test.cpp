// storage::Database::WriteGroup (the store's side of an application's write queue): the writes
// of the owning thread commit together at Flush(), an exclusive write flushes the group before it
// starts, a batch begun in the group is part of it, and other threads' writes are not.
#include <gtest/gtest.h>

#include <thread>

#include "schema/class_schema.hpp"
#include "storage/database.hpp"
#include "temp_dir.hpp"
#include "util/time.hpp"

namespace crmd::storage {
namespace {

class WriteGroupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = OpenSqlite(dir_.File("data.db"), Durability::kNormal, 2);
    cls_ = schema::ClassSchema::NewImplicit("Rows");
    auto txn = db_->BeginWrite(/*exclusive=*/true);
    txn->SaveClass(nullptr, cls_);
    txn->Commit();
  }

  // Inserts `id` in a write of its own, committed unless `commit` is false.
  void Write(const std::string& id, bool exclusive = false, bool commit = true) {
    Row row;
    row.object_id = id;
    row.created_at = row.updated_at = timeutil::NowIso();
    row.cells = {std::monostate{}, std::monostate{}};
    auto txn = db_->BeginWrite(exclusive);
    EXPECT_EQ(txn->Exclusive(), exclusive);
    txn->Insert(cls_, StoredColumns(cls_), row);
    if (commit) txn->Commit();
  }

  bool Visible(const std::string& id) { return db_->Get(cls_, id).has_value(); }

  const test::TempDir dir_{"write-group"};
  std::unique_ptr<Database> db_;
  schema::ClassSchema cls_;
};

TEST_F(WriteGroupTest, WritesCommitTogetherAtFlush) {
  auto group = db_->BeginWriteGroup();
  const auto epoch = group->Epoch();
  Write("a");
  Write("b");
  Write("dropped", /*exclusive=*/false, /*commit=*/false);  // rolled back alone
  // Commit() returned, but nothing is committed until the group is: no reader sees it yet.
  EXPECT_FALSE(Visible("a"));
  EXPECT_FALSE(Visible("b"));
  group->Flush();
  EXPECT_NE(group->Epoch(), epoch);
  EXPECT_FALSE(group->Failed(epoch));
  EXPECT_TRUE(Visible("a"));
  EXPECT_TRUE(Visible("b"));
  EXPECT_FALSE(Visible("dropped"));
}

TEST_F(WriteGroupTest, AnExclusiveWriteFlushesTheGroupFirst) {
  auto group = db_->BeginWriteGroup();
  const auto epoch = group->Epoch();
  Write("before");
  {
    auto txn = db_->BeginWrite(/*exclusive=*/true);
    EXPECT_TRUE(txn->Exclusive());
    // The group's writes were committed before the exclusive write began.
    EXPECT_TRUE(Visible("before"));
    EXPECT_NE(group->Epoch(), epoch);
    EXPECT_FALSE(group->Failed(epoch));
  }
  Write("after");
  EXPECT_FALSE(Visible("after"));
  group.reset();  // the destructor flushes
  EXPECT_TRUE(Visible("after"));
  EXPECT_TRUE(db_->CheckIntegrity());
}

TEST_F(WriteGroupTest, ABatchInTheGroupIsPartOfIt) {
  auto group = db_->BeginWriteGroup();
  Write("first");  // the group holds the connection from here
  {
    auto batch = db_->BeginBatch();  // a batch of its own would wait for the group forever
    Write("item");
    Write("failed item", /*exclusive=*/false, /*commit=*/false);
    batch->Commit();
  }
  EXPECT_FALSE(Visible("item"));
  group->Flush();
  EXPECT_TRUE(Visible("first"));
  EXPECT_TRUE(Visible("item"));
  EXPECT_FALSE(Visible("failed item"));
}

TEST_F(WriteGroupTest, AnotherThreadsWriteCommitsOnItsOwn) {
  auto group = db_->BeginWriteGroup();
  std::thread other([&] { Write("other"); });
  other.join();
  EXPECT_TRUE(Visible("other"));  // committed by its own Commit(), not waiting for the group's
  Write("mine");
  EXPECT_FALSE(Visible("mine"));
}

}  // namespace
}  // namespace crmd::storage
