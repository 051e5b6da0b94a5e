// storage::WriteGroup (the store's side of an application's write queue): the writes
// begun through it commit together at Flush(), an exclusive write flushes the group before it
// starts, a write's nested savepoints fail alone inside it, writes begun elsewhere are no members,
// and a waiting exclusive writer gets its turn between two groups.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "rows_store.hpp"

namespace crmd::storage {
namespace {

class WriteGroupTest : public ::testing::TestWithParam<std::string> {
 protected:
  // Inserts `id` in a write of its own begun through `group`, committed unless `commit` is false.
  void Write(WriteGroup& group, const std::string& id, bool exclusive = false, bool commit = true) {
    EXPECT_EQ(store_.Insert(id, 0, exclusive, commit, &group), exclusive);
  }
  bool Visible(const std::string& id) { return store_.Visible(id); }

  test::RowsStore store_{"write-group", GetParam()};
  std::unique_ptr<Database>& db_ = store_.db;
};

TEST_P(WriteGroupTest, WritesCommitTogetherAtFlush) {
  auto group = db_->BeginWriteGroup();
  const auto epoch = group->Epoch();
  Write(*group, "a");
  Write(*group, "b");
  Write(*group, "dropped", /*exclusive=*/false, /*commit=*/false);  // rolled back alone
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

TEST_P(WriteGroupTest, AnExclusiveWriteFlushesTheGroupFirst) {
  auto group = db_->BeginWriteGroup();
  const auto epoch = group->Epoch();
  Write(*group, "before");
  {
    auto txn = group->BeginWrite(/*exclusive=*/true);
    EXPECT_TRUE(txn->Exclusive());
    // The group's writes were committed before the exclusive write began.
    EXPECT_TRUE(Visible("before"));
    EXPECT_NE(group->Epoch(), epoch);
    EXPECT_FALSE(group->Failed(epoch));
  }
  Write(*group, "after");
  EXPECT_FALSE(Visible("after"));
  group.reset();  // the destructor flushes
  EXPECT_TRUE(Visible("after"));
  EXPECT_TRUE(db_->CheckIntegrity());
}

TEST_P(WriteGroupTest, ANestedSavepointFailsAloneInsideItsWrite) {
  auto group = db_->BeginWriteGroup();
  {
    auto txn = group->BeginWrite(/*exclusive=*/false);
    txn->Insert(store_.cls, StoredColumns(store_.cls), test::RowsStore::NewRow("outer"));
    txn->OpenSavepoint();
    txn->Insert(store_.cls, StoredColumns(store_.cls), test::RowsStore::NewRow("failed item"));
    txn->RollbackSavepoint();
    txn->OpenSavepoint();
    txn->Insert(store_.cls, StoredColumns(store_.cls), test::RowsStore::NewRow("item"));
    txn->ReleaseSavepoint();
    txn->Commit();
  }
  Write(*group, "later", /*exclusive=*/false, /*commit=*/false);  // rolled back alone
  EXPECT_FALSE(Visible("item"));
  group->Flush();
  EXPECT_TRUE(Visible("outer"));
  EXPECT_TRUE(Visible("item"));
  EXPECT_FALSE(Visible("failed item"));
  EXPECT_FALSE(Visible("later"));
}

TEST_P(WriteGroupTest, AnotherThreadsWriteIsNoMemberOfTheGroup) {
  auto group = db_->BeginWriteGroup();
  Write(*group, "mine");  // the group holds the connection from here
  std::atomic<bool> committed{false};
  std::thread other([&] {
    store_.Insert("other");  // waits for the connection; its Commit() returns only once it is durable
    committed = true;
  });
  // Nested in the group, its Commit() would return at once, uncommitted.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(committed.load());
  EXPECT_FALSE(Visible("other"));
  group->Flush();
  other.join();
  EXPECT_TRUE(Visible("mine"));
  EXPECT_TRUE(Visible("other"));
}

TEST_P(WriteGroupTest, ASchemaChangeIsNotHeldBackByGroupAfterGroup) {
  // An exclusive writer waiting for the open group: the group's next write after its flush does
  // not open a new group before the exclusive writer had its turn.
  auto group = db_->BeginWriteGroup();
  Write(*group, "first");
  std::thread other([&] { store_.Insert("exclusive", 0, /*exclusive=*/true); });
  // Until the exclusive writer waits (a fixed sleep was not always long enough on a loaded machine).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!group->ExclusiveWaiting() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_TRUE(group->ExclusiveWaiting());
  group->Flush();
  Write(*group, "second");  // opens the next group only after the exclusive write committed
  EXPECT_TRUE(Visible("exclusive"));
  group->Flush();
  other.join();
  EXPECT_TRUE(Visible("second"));
}

INSTANTIATE_TEST_SUITE_P(Stores, WriteGroupTest, test::AllStores(), test::StoreName);

}  // namespace
}  // namespace crmd::storage
