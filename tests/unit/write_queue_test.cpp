// app::WriteQueue: jobs submitted from many threads all run and finish exactly once, each after
// its write is committed, and Stop() drains what was queued and refuses what comes later.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "app/write_queue.hpp"
#include "schema/class_schema.hpp"
#include "storage/database.hpp"
#include "temp_dir.hpp"
#include "util/time.hpp"

namespace crmd::app {
namespace {

class WriteQueueTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = storage::OpenSqlite(dir_.File("data.db"), storage::Durability::kNormal, 2);
    cls_ = schema::ClassSchema::NewImplicit("Rows");
    auto txn = db_->BeginWrite(/*exclusive=*/true);
    txn->SaveClass(nullptr, cls_);
    txn->Commit();
  }

  WriteQueue::Job InsertJob(const std::string& id) {
    return {[this, id] {
              storage::Row row;
              row.object_id = id;
              row.created_at = row.updated_at = timeutil::NowIso();
              row.cells = {std::monostate{}, std::monostate{}};
              auto txn = db_->BeginWrite();
              txn->Insert(cls_, storage::StoredColumns(cls_), row);
              txn->Commit();
            },
            [this, id](bool durable) {
              std::lock_guard lock(mutex_);
              finished_.push_back(id);
              // Finished means committed: another connection sees the row already.
              if (durable && db_->Get(cls_, id)) visible_at_finish_.insert(id);
            }};
  }

  const test::TempDir dir_{"write-queue"};
  std::unique_ptr<storage::Database> db_;
  schema::ClassSchema cls_;
  std::mutex mutex_;
  std::vector<std::string> finished_;
  std::set<std::string> visible_at_finish_;
};

TEST_F(WriteQueueTest, EveryJobFinishesOnceAfterItsWriteIsCommitted) {
  constexpr int kThreads = 4, kPerThread = 50;
  {
    WriteQueue queue(*db_);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        for (int i = 0; i < kPerThread; ++i) queue.Submit(InsertJob("r" + std::to_string(t * kPerThread + i)));
      });
    for (auto& th : threads) th.join();
  }  // the destructor stops the queue after every job submitted
  EXPECT_EQ(finished_.size(), std::size_t{kThreads * kPerThread});
  EXPECT_EQ(std::set<std::string>(finished_.begin(), finished_.end()).size(), finished_.size());
  EXPECT_EQ(visible_at_finish_.size(), std::size_t{kThreads * kPerThread});
  EXPECT_TRUE(db_->CheckIntegrity());
}

TEST_F(WriteQueueTest, StopDrainsTheQueueAndRefusesLaterJobs) {
  WriteQueue queue(*db_);
  for (int i = 0; i < 20; ++i) queue.Submit(InsertJob("q" + std::to_string(i)));
  queue.Stop();
  EXPECT_EQ(visible_at_finish_.size(), 20u);

  bool ran = false, finished = false, durable = true;
  queue.Submit({[&] { ran = true; }, [&](bool d) { finished = true, durable = d; }});
  EXPECT_FALSE(ran);
  EXPECT_TRUE(finished);
  EXPECT_FALSE(durable);
}

}  // namespace
}  // namespace crmd::app
