// storage/sqlite/count_cache through the Database interface: a cached count is served only until
// the next commit of any kind (group member, batch, exclusive), so a count asked after a write was
// acknowledged always includes it, also while writers and counters run concurrently.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "rows_store.hpp"
#include "storage/sqlite/count_cache.hpp"

namespace crmd::storage {
namespace {

class CountCacheTest : public ::testing::Test {
 protected:
  void SetUp() override { all_.limit = -1; }
  static Row NewRow(int n) { return test::RowsStore::NewRow(fmt::format("r{}", n), n); }
  void Insert(int n, bool exclusive = false) { store_.Insert(fmt::format("r{}", n), n, exclusive); }

  test::RowsStore store_{"count"};
  std::unique_ptr<Database>& db_ = store_.db;
  const schema::ClassSchema& cls_ = store_.cls;
  schema::Query all_;
};

TEST_F(CountCacheTest, EveryKindOfCommitRetiresTheCachedCount) {
  Insert(1);
  Insert(2);
  EXPECT_EQ(db_->Count(cls_, all_), 2);
  EXPECT_EQ(db_->Count(cls_, all_), 2);  // served from the cache
  Insert(3);                             // a group member
  EXPECT_EQ(db_->Count(cls_, all_), 3);
  Insert(4, /*exclusive=*/true);
  EXPECT_EQ(db_->Count(cls_, all_), 4);
  {
    auto txn = db_->BeginWrite();
    for (int n = 5; n <= 7; ++n) {  // nested writes, as a batch's items
      txn->OpenSavepoint();
      txn->Insert(cls_, StoredColumns(cls_), NewRow(n));
      txn->ReleaseSavepoint();
    }
    txn->Commit();
  }
  EXPECT_EQ(db_->Count(cls_, all_), 7);
  {
    auto txn = db_->BeginWrite();
    EXPECT_TRUE(txn->Delete(cls_, "r1"));
    txn->Commit();
  }
  EXPECT_EQ(db_->Count(cls_, all_), 6);
  {
    auto txn = db_->BeginWrite();  // rolled back: nothing changes, the cache may stay
    txn->Insert(cls_, StoredColumns(cls_), NewRow(99));
  }
  EXPECT_EQ(db_->Count(cls_, all_), 6);
}

TEST_F(CountCacheTest, ACountAskedAfterAnAcknowledgedWriteIncludesIt) {
  constexpr int kWriters = 4, kPerWriter = 40;
  std::atomic<int> acknowledged{0};
  std::atomic<bool> done{false};
  std::atomic<int> stale{0}, counted{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      for (int i = 0; i < kPerWriter; ++i) {
        Insert(w * kPerWriter + i);
        ++acknowledged;
      }
    });
  }
  for (int c = 0; c < 2; ++c) {
    threads.emplace_back([&] {
      while (!done.load()) {
        const int before = acknowledged.load();
        if (db_->Count(cls_, all_) < before) ++stale;
        ++counted;
      }
    });
  }
  for (int w = 0; w < kWriters; ++w) threads[w].join();
  done = true;
  for (std::size_t t = kWriters; t < threads.size(); ++t) threads[t].join();
  EXPECT_EQ(stale.load(), 0);
  EXPECT_GT(counted.load(), 0);
  EXPECT_EQ(db_->Count(cls_, all_), kWriters * kPerWriter);
}

TEST(CountCacheKeyTest, DifferentParametersNeverShareAKey) {
  using sqlite::CountCache;
  const std::string sql = "SELECT count(*) FROM t WHERE a = ? AND b = ?";
  EXPECT_NE(CountCache::Key(sql, {std::string("1"), std::string("2")}),
            CountCache::Key(sql, {std::string("12"), std::string("")}));
  EXPECT_NE(CountCache::Key(sql, {std::int64_t{1}}), CountCache::Key(sql, {std::string("1")}));
  EXPECT_NE(CountCache::Key(sql, {std::int64_t{1}}), CountCache::Key(sql, {1.0}));
  EXPECT_NE(CountCache::Key(sql, {std::monostate{}}), CountCache::Key(sql, {}));
  EXPECT_EQ(CountCache::Key(sql, {std::string("x"), 2.5}), CountCache::Key(sql, {std::string("x"), 2.5}));
}

}  // namespace
}  // namespace crmd::storage
