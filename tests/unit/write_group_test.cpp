// storage::Database::WriteGroup (the store's side of an application's write queue): the writes
// of the owning thread commit together at Flush(), an exclusive write flushes the group before it
// starts, a batch begun in the group is part of it, other threads' writes are not, and a waiting
// exclusive writer gets its turn between two groups.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "rows_store.hpp"

namespace crmd::storage {
namespace {

class WriteGroupTest : public ::testing::Test {
 protected:
  // Inserts `id` in a write of its own, committed unless `commit` is false.
  void Write(const std::string& id, bool exclusive = false, bool commit = true) {
    EXPECT_EQ(store_.Insert(id, 0, exclusive, commit), exclusive);
  }
  bool Visible(const std::string& id) { return store_.Visible(id); }

  test::RowsStore store_{"write-group"};
  std::unique_ptr<Database>& db_ = store_.db;
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

TEST_F(WriteGroupTest, AnotherThreadsWriteIsNoMemberOfTheGroup) {
  auto group = db_->BeginWriteGroup();
  Write("mine");  // the group holds the connection from here
  std::atomic<bool> committed{false};
  std::thread other([&] {
    Write("other");  // waits for the connection; its Commit() returns only once it is durable
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

TEST_F(WriteGroupTest, ASchemaChangeIsNotHeldBackByGroupAfterGroup) {
  // An exclusive writer waiting for the open group: the group's next write after its flush does
  // not open a new group before the exclusive writer had its turn.
  auto group = db_->BeginWriteGroup();
  Write("first");
  std::thread other([&] { Write("exclusive", /*exclusive=*/true); });
  // Until the exclusive writer waits (a fixed sleep was not always long enough on a loaded machine).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!group->ExclusiveWaiting() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_TRUE(group->ExclusiveWaiting());
  group->Flush();
  Write("second");  // opens the next group only after the exclusive write committed
  EXPECT_TRUE(Visible("exclusive"));
  group->Flush();
  other.join();
  EXPECT_TRUE(Visible("second"));
}

}  // namespace
}  // namespace crmd::storage
