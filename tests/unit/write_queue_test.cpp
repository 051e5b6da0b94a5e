// app::WriteQueue: jobs submitted from many threads all run and finish exactly once, each after
// its write is committed; Stop() drains what was queued and refuses what comes later; a job is
// finished as not durable exactly when a COMMIT holding its writes failed.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <string_view>
#include <thread>
#include <vector>

#include "app/write_queue.hpp"
#include "failing_commits.hpp"
#include "rows_store.hpp"

namespace crmd::app {
namespace {

class WriteQueueTest : public ::testing::TestWithParam<std::string> {
 protected:
  WriteQueue::Job InsertJob(const std::string& id) {
    return {[this, id](storage::WriteGroup& group) { store_.Insert(id, 0, false, true, &group); },
            [this, id](storage::CommitOutcome outcome) {
              const bool durable = storage::Durable(outcome);
              std::lock_guard lock(mutex_);
              finished_.push_back(id);
              // Finished means committed: another connection sees the row already.
              if (durable && store_.Visible(id)) visible_at_finish_.insert(id);
            }};
  }

  test::RowsStore store_{"write-queue", GetParam()};
  std::unique_ptr<storage::Database>& db_ = store_.db;
  std::mutex mutex_;
  std::vector<std::string> finished_;
  std::set<std::string> visible_at_finish_;
};

TEST_P(WriteQueueTest, EveryJobFinishesOnceAfterItsWriteIsCommitted) {
  constexpr int kThreads = 4, kPerThread = 50;
  {
    WriteQueue queue(*db_);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        for (int i = 0; i < kPerThread; ++i) queue.Submit(InsertJob(fmt::format("r{}", t * kPerThread + i)));
      });
    for (auto& th : threads) th.join();
  }  // the destructor stops the queue after every job submitted
  EXPECT_EQ(finished_.size(), std::size_t{kThreads * kPerThread});
  EXPECT_EQ(std::set<std::string>(finished_.begin(), finished_.end()).size(), finished_.size());
  EXPECT_EQ(visible_at_finish_.size(), std::size_t{kThreads * kPerThread});
  EXPECT_TRUE(db_->CheckIntegrity());
}

TEST_P(WriteQueueTest, AnIdleQueueEndsItsThreadAndStartsAnotherForTheNextJob) {
  WriteQueue queue(*db_, std::chrono::milliseconds(1));
  for (int round = 0; round < 5; ++round) {
    queue.Submit(InsertJob("idle" + std::to_string(round)));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // long past idle: the thread ended
  }
  queue.Stop();
  EXPECT_EQ(visible_at_finish_.size(), 5u);
}

TEST_P(WriteQueueTest, StopDrainsTheQueueAndRefusesLaterJobs) {
  WriteQueue queue(*db_);
  for (int i = 0; i < 20; ++i) queue.Submit(InsertJob(fmt::format("q{}", i)));
  queue.Stop();
  EXPECT_EQ(visible_at_finish_.size(), 20u);

  bool ran = false, finished = false, durable = true;
  queue.Submit({[&](storage::WriteGroup&) { ran = true; }, [&](storage::CommitOutcome o) { finished = true, durable = storage::Durable(o); }});
  EXPECT_FALSE(ran);
  EXPECT_TRUE(finished);
  EXPECT_FALSE(durable);
}

TEST(WriteQueueFailureTest, AJobIsFinishedAsNotDurableExactlyWhenACommitHoldingItsWritesFailed) {
  test::FailingCommits db;
  db.failing = {1};  // the second group's COMMIT
  std::promise<void> running, submitted;
  std::map<std::string, bool> durable;
  std::vector<std::string_view> after_flush;
  {
    WriteQueue queue(db);
    auto record = [&](const std::string& name) { return [&, name](storage::CommitOutcome o) { durable[name] = storage::Durable(o); }; };
    // Runs alone in the first group and holds the queue until the next three are queued, so that
    // they run as the second group.
    queue.Submit({[&, f = submitted.get_future().share()](storage::WriteGroup& group) {
                    group.BeginWrite(false);
                    running.set_value();
                    f.wait();
                  },
                  record("gate")});
    running.get_future().wait();
    queue.Submit({[](storage::WriteGroup& group) { group.BeginWrite(false); }, record("writer")});
    queue.Submit({[](storage::WriteGroup&) {}, record("reader")});  // writes nothing
    queue.Submit({[&](storage::WriteGroup& group) {
                    group.BeginWrite(false);
                    group.AfterFlush([&] { after_flush.push_back("the writer's group"); });
                  },
                  record("last")});
    submitted.set_value();
    queue.Stop();
    queue.Submit({[](storage::WriteGroup& group) { group.BeginWrite(false); }, record("refused")});
  }
  EXPECT_TRUE(durable.at("gate"));
  EXPECT_FALSE(durable.at("writer"));  // its group's COMMIT failed
  EXPECT_TRUE(durable.at("reader"));   // nothing of it was in that COMMIT
  EXPECT_FALSE(durable.at("last"));
  EXPECT_FALSE(durable.at("refused"));
  EXPECT_EQ(db.commits, 2u);
  EXPECT_TRUE(after_flush.empty());  // left for writes that were lost: never run
}

INSTANTIATE_TEST_SUITE_P(Stores, WriteQueueTest, test::AllStores(), test::StoreName);

}  // namespace
}  // namespace crmd::app
