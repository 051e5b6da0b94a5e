// app::WriteQueue: jobs submitted from many threads all run and finish exactly once, each after
// its write is committed; Stop() drains what was queued and refuses what comes later; a job whose
// group's COMMIT failed is finished as not durable.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "app/write_queue.hpp"
#include "rows_store.hpp"

namespace crmd::app {
namespace {

class WriteQueueTest : public ::testing::TestWithParam<std::string> {
 protected:
  WriteQueue::Job InsertJob(const std::string& id) {
    return {[this, id](QueuedGroup& group) { store_.Insert(id, 0, false, true, &group.storage()); },
            [this, id](bool durable) {
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
  queue.Submit({[&](QueuedGroup&) { ran = true; }, [&](bool d) { finished = true, durable = d; }});
  EXPECT_FALSE(ran);
  EXPECT_TRUE(finished);
  EXPECT_FALSE(durable);
}

// Write groups that fail the flushes they are told to: what the queue does with a failed COMMIT,
// without a disk that fails. The queue needs nothing else of a store.
class FailingFlushes final : public storage::WriteGroups {
 public:
  class Group final : public storage::WriteGroup {
   public:
    explicit Group(FailingFlushes& db) : db_(db), number_(db.groups++) {}
    std::unique_ptr<storage::WriteTransaction> BeginWrite(bool) override { throw std::logic_error("unused"); }
    std::uint64_t Epoch() const override { return epoch_; }
    void Flush() override { ++epoch_; }
    bool Failed(std::uint64_t epoch) const override { return db_.failing.contains({number_, epoch}); }
    void FlushIfLost() override {}
    bool ExclusiveWaiting() const override { return false; }

   private:
    FailingFlushes& db_;
    int number_;
    std::uint64_t epoch_ = 0;
  };

  std::set<std::pair<int, std::uint64_t>> failing;  // (group, epoch)
  int groups = 0;

  std::unique_ptr<storage::WriteGroup> BeginWriteGroup() override { return std::make_unique<Group>(*this); }
};

TEST(WriteQueueFailureTest, AJobIsDurableOnlyIfEveryFlushItsWritesMayBelongToSucceeded) {
  FailingFlushes db;
  db.failing = {{1, 0}};  // the second group's first flush
  std::promise<void> running, submitted;
  std::map<std::string, bool> durable;
  std::vector<std::string_view> after_flush;
  {
    WriteQueue queue(db);
    auto record = [&](const std::string& name) { return [&, name](bool d) { durable[name] = d; }; };
    // Runs alone in the first group and holds the queue until the next three are queued, so that
    // they run as the second group.
    queue.Submit({[&, f = submitted.get_future().share()](QueuedGroup&) {
                    running.set_value();
                    f.wait();
                  },
                  record("gate")});
    running.get_future().wait();
    queue.Submit({[](QueuedGroup&) {}, record("before")});  // writes before the failed flush
    // An exclusive write flushes first; the actions its unit left behind wait for their flush.
    queue.Submit({[&](QueuedGroup& g) {
                    g.AfterFlush([&] { after_flush.push_back("before the failed flush"); });
                    g.storage().Flush();
                    g.AfterFlush([&] { after_flush.push_back("after it"); });
                  },
                  record("exclusive")});
    queue.Submit({[](QueuedGroup&) {}, record("after")});  // writes after it
    submitted.set_value();
  }
  EXPECT_TRUE(durable.at("gate"));
  EXPECT_FALSE(durable.at("before"));     // its flush failed
  EXPECT_FALSE(durable.at("exclusive"));  // it may have written before its own flush
  EXPECT_TRUE(durable.at("after"));
  // The action of the failed flush's writes was dropped; the other ran, once.
  EXPECT_EQ(after_flush, std::vector<std::string_view>{"after it"});
}

INSTANTIATE_TEST_SUITE_P(Stores, WriteQueueTest, test::AllStores(), test::StoreName);

}  // namespace
}  // namespace crmd::app
