// storage::WriteGroups::CommitBatch (group commit, the store's side of an application's write
// queue and of a batch): the grouped writes of its jobs commit together at a flush, an exclusive
// write flushes the group before it starts, a write's nested savepoints fail alone inside it,
// writes begun elsewhere are no members, a waiting exclusive writer gets its turn between two
// groups, after-flush actions run only once the writes before them are durable, and a failed or
// lost COMMIT fails exactly the jobs that wrote into it.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string_view>
#include <thread>
#include <vector>

#include "failing_commits.hpp"
#include "rows_store.hpp"

namespace crmd::storage {
namespace {

std::vector<bool> Durables(const std::vector<CommitOutcome>& outcomes) {
  std::vector<bool> out;
  for (const auto outcome : outcomes) out.push_back(Durable(outcome));
  return out;
}

class WriteGroupTest : public ::testing::TestWithParam<std::string> {
 protected:
  // Inserts `id` in a write of its own begun through `group`, committed unless `commit` is false.
  void Write(WriteGroup& group, const std::string& id, bool exclusive = false, bool commit = true) {
    EXPECT_EQ(store_.Insert(id, 0, exclusive, commit, &group), exclusive);
  }
  bool Visible(const std::string& id) { return store_.Visible(id); }
  std::vector<bool> Run(const std::vector<WriteGroups::Job>& jobs) { return Durables(db_->CommitBatch(jobs)); }

  test::RowsStore store_{"write-group", GetParam()};
  std::unique_ptr<Database>& db_ = store_.db;
};

TEST_P(WriteGroupTest, WritesCommitTogetherAtFlush) {
  auto durable = Run({[&](WriteGroup& group) {
    Write(group, "a");
    Write(group, "b");
    Write(group, "dropped", /*exclusive=*/false, /*commit=*/false);  // rolled back alone
    // Commit() returned, but nothing is committed until the group is: no reader sees it yet.
    EXPECT_FALSE(Visible("a"));
    EXPECT_FALSE(Visible("b"));
    group.Flush();
    EXPECT_TRUE(Visible("a"));
    EXPECT_TRUE(Visible("b"));
    Write(group, "c");
    EXPECT_FALSE(Visible("c"));
  }});
  EXPECT_EQ(durable, std::vector<bool>{true});
  EXPECT_TRUE(Visible("c"));  // CommitBatch returns after the last flush
  EXPECT_FALSE(Visible("dropped"));
}

TEST_P(WriteGroupTest, AnExclusiveWriteFlushesTheGroupFirst) {
  auto durable = Run({[&](WriteGroup& group) {
    Write(group, "before");
    {
      auto txn = group.BeginWrite(/*exclusive=*/true);
      EXPECT_TRUE(txn->Exclusive());
      // The group's writes were committed before the exclusive write began.
      EXPECT_TRUE(Visible("before"));
    }
    Write(group, "after");
    EXPECT_FALSE(Visible("after"));
  }});
  EXPECT_EQ(durable, std::vector<bool>{true});
  EXPECT_TRUE(Visible("after"));
  EXPECT_TRUE(db_->CheckIntegrity());
}

TEST_P(WriteGroupTest, ANestedSavepointFailsAloneInsideItsWrite) {
  Run({[&](WriteGroup& group) {
    {
      auto txn = group.BeginWrite(/*exclusive=*/false);
      txn->Insert(store_.cls, StoredColumns(store_.cls), test::RowsStore::NewRow("outer"));
      txn->OpenSavepoint();
      txn->Insert(store_.cls, StoredColumns(store_.cls), test::RowsStore::NewRow("failed item"));
      txn->RollbackSavepoint();
      txn->OpenSavepoint();
      txn->Insert(store_.cls, StoredColumns(store_.cls), test::RowsStore::NewRow("item"));
      txn->ReleaseSavepoint();
      txn->Commit();
    }
    Write(group, "later", /*exclusive=*/false, /*commit=*/false);  // rolled back alone
    EXPECT_FALSE(Visible("item"));
  }});
  EXPECT_TRUE(Visible("outer"));
  EXPECT_TRUE(Visible("item"));
  EXPECT_FALSE(Visible("failed item"));
  EXPECT_FALSE(Visible("later"));
}

TEST_P(WriteGroupTest, AnotherThreadsWriteIsNoMemberOfTheGroup) {
  std::atomic<bool> committed{false};
  std::thread other;
  Run({[&](WriteGroup& group) {
    Write(group, "mine");  // the group holds the connection from here
    other = std::thread([&] {
      store_.Insert("other");  // waits for the connection; its Commit() returns only once it is durable
      committed = true;
    });
    // Nested in the group, its Commit() would return at once, uncommitted.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_FALSE(committed.load());
    EXPECT_FALSE(Visible("other"));
  }});
  other.join();
  EXPECT_TRUE(Visible("mine"));
  EXPECT_TRUE(Visible("other"));
}

TEST_P(WriteGroupTest, ASchemaChangeIsNotHeldBackByGroupAfterGroup) {
  // An exclusive writer waiting for the open group: the group's next write after its flush does
  // not open a new group before the exclusive writer had its turn.
  std::thread other;
  Run({[&](WriteGroup& group) {
    Write(group, "first");
    other = std::thread([&] { store_.Insert("exclusive", 0, /*exclusive=*/true); });
    // Until the exclusive writer waits (a fixed sleep was not always long enough on a loaded machine).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!group.ExclusiveWaiting() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ASSERT_TRUE(group.ExclusiveWaiting());
    group.Flush();
    Write(group, "second");  // opens the next group only after the exclusive write committed
    EXPECT_TRUE(Visible("exclusive"));
  }});
  other.join();
  EXPECT_TRUE(Visible("second"));
}

TEST_P(WriteGroupTest, AfterFlushActionsRunOnceTheWritesBeforeThemAreVisible) {
  std::vector<std::string> seen;  // the rows each action saw committed when it ran
  auto action = [&](std::string id) { return [&, id] { seen.push_back(id + (Visible(id) ? " visible" : " not")); }; };
  auto durable = Run({[&](WriteGroup& group) {
                        Write(group, "a");
                        group.AfterFlush(action("a"));
                        EXPECT_TRUE(seen.empty());  // not before the flush
                        group.Flush();
                        EXPECT_EQ(seen, std::vector<std::string>{"a visible"});  // at it, not at the batch's end
                        Write(group, "b");
                        group.AfterFlush(action("b"));
                      },
                      [&](WriteGroup& group) {
                        Write(group, "c");
                        group.AfterFlush(action("c"));
                        EXPECT_EQ(seen.size(), 1u);
                      }});
  EXPECT_EQ(durable, (std::vector<bool>{true, true}));
  EXPECT_EQ(seen, (std::vector<std::string>{"a visible", "b visible", "c visible"}));
}

TEST_P(WriteGroupTest, AJobThatThrowsLeavesTheOthersToRunAndCommit) {
  auto durable = Run({[&](WriteGroup& group) { Write(group, "first"); },
                      [&](WriteGroup&) { throw std::runtime_error("a fault past the job's own answer"); },
                      [&](WriteGroup& group) { Write(group, "third"); }});
  EXPECT_EQ(durable, (std::vector<bool>{true, true, true}));
  EXPECT_TRUE(Visible("first"));
  EXPECT_TRUE(Visible("third"));
}

INSTANTIATE_TEST_SUITE_P(Stores, WriteGroupTest, test::AllStores(), test::StoreName);

TEST(WriteGroupFailureTest, AFailedCommitFailsExactlyTheJobsThatWroteIntoIt) {
  test::FailingCommits db;
  db.failing = {0};
  std::vector<std::string_view> ran;
  const std::vector<WriteGroups::Job> jobs = {
      [&](WriteGroup& group) {  // writes into the failed COMMIT
        group.BeginWrite(false);
        group.AfterFlush([&] { ran.push_back("before's"); });
      },
      [&](WriteGroup&) {},  // writes nothing: nothing of it is lost
      [&](WriteGroup& group) {
        group.BeginWrite(false);
        group.AfterFlush([&] { ran.push_back("exclusive's grouped write's"); });
        group.BeginWrite(true);  // flushes first: the failed COMMIT
        group.AfterFlush([&] { ran.push_back("after the failed flush"); });
      },
      [&](WriteGroup& group) { group.BeginWrite(false); },  // writes into the next COMMIT
  };
  EXPECT_EQ(Durables(db.CommitBatch(jobs)), (std::vector<bool>{false, true, false, true}));
  EXPECT_EQ(db.commits, 2u);
  // The actions left for the failed COMMIT's writes were dropped; the other ran, once.
  EXPECT_EQ(ran, std::vector<std::string_view>{"after the failed flush"});
}

TEST(WriteGroupFailureTest, AGroupLostToAnErrorFailsOnlyTheWritesBeforeTheLoss) {
  test::FailingCommits db;
  std::vector<std::string_view> ran;
  const std::vector<WriteGroups::Job> jobs = {
      [&](WriteGroup& group) {
        group.BeginWrite(false);
        group.AfterFlush([&] { ran.push_back("first's"); });
      },
      [&](WriteGroup& group) {
        group.BeginWrite(false);
        db.lost = true;  // its write's error rolled the whole transaction back
      },
      [&](WriteGroup&) {},  // writes nothing: nothing of it is lost
      [&](WriteGroup& group) {
        group.BeginWrite(false);
        db.lost = true;
        // Begins a new transaction, not a write that would commit on its own in the lost one.
        group.BeginWrite(false);
        group.AfterFlush([&] { ran.push_back("retry's"); });
      },
  };
  EXPECT_EQ(Durables(db.CommitBatch(jobs)), (std::vector<bool>{false, false, true, false}));
  EXPECT_EQ(ran, std::vector<std::string_view>{"retry's"});
}

// A job is answered by the worst commit that held its writes: one of them of unknown outcome makes
// it unknown (never answered as retryable), though another was only unavailable.
TEST(WriteGroupFailureTest, AJobTakesTheWorstOutcomeOfTheCommitsThatHeldItsWrites) {
  test::FailingCommits db;
  db.outcomes = {{0, CommitOutcome::kUnknown}, {1, CommitOutcome::kUnavailable}};
  const std::vector<WriteGroups::Job> jobs = {
      [&](WriteGroup& group) { group.BeginWrite(false); },  // into COMMIT 0, unknown
      [&](WriteGroup& group) {
        group.BeginWrite(false);  // into COMMIT 0
        group.Flush();
        group.BeginWrite(false);  // into COMMIT 1, unavailable
      },
      [&](WriteGroup& group) { group.BeginWrite(false); },  // into COMMIT 1
      [&](WriteGroup&) {},
  };
  EXPECT_EQ(db.CommitBatch(jobs), (std::vector<CommitOutcome>{CommitOutcome::kUnknown, CommitOutcome::kUnknown,
                                                              CommitOutcome::kUnavailable, CommitOutcome::kDurable}));
}

}  // namespace
}  // namespace crmd::storage
