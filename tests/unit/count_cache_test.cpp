// storage/count_cache through the Database interface, on both stores: a cached count is served
// only until the next commit of any kind (group member, batch, exclusive) that changed what it
// counted, so a count asked after a write was acknowledged always includes it, also while writers
// and counters run concurrently; on PostgreSQL also when the write went through another server.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "rows_store.hpp"
#include "storage/count_cache.hpp"
#include "storage/postgres/connection.hpp"
#include "storage/write_group.hpp"
#include "test_store.hpp"

namespace crmd::storage {
namespace {

class CountCacheTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { all_.limit = -1; }
  static Row NewRow(int n) { return test::RowsStore::NewRow(fmt::format("r{}", n), n); }
  void Insert(int n, bool exclusive = false) { store_.Insert(fmt::format("r{}", n), n, exclusive); }

  test::RowsStore store_{"count", GetParam()};
  std::unique_ptr<Database>& db_ = store_.db;
  const schema::ClassSchema& cls_ = store_.cls;
  schema::Query all_;
};

TEST_P(CountCacheTest, EveryKindOfCommitRetiresTheCachedCount) {
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

TEST_P(CountCacheTest, ACountAskedAfterAnAcknowledgedWriteIncludesIt) {
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

INSTANTIATE_TEST_SUITE_P(Stores, CountCacheTest, test::AllStores(), test::StoreName);

// Two servers on one PostgreSQL database, each with its own cache: a write through one retires
// the other's cached answers at once, whatever kind of write it is.
TEST(CountCacheAcrossServersTest, AWriteThroughOneServerRetiresTheOthersCachedCount) {
  const std::string url = test::SharedPgCluster().NewDatabase();
  auto a = PostgresStores(url, 4)->Open("test");
  auto b = PostgresStores(url, 4)->Open("test");
  auto cls = schema::ClassSchema::NewImplicit("Rows");
  cls.fields.emplace_back("N", schema::FieldDef{schema::FieldType::kNumber, {}});
  {
    auto txn = a->BeginWrite(/*exclusive=*/true);
    txn->SaveClass(nullptr, cls);
    txn->Commit();
  }
  schema::Query all;
  all.limit = -1;
  schema::Query big = all;  // N >= 10
  big.where = schema::FieldEquals("N", std::int64_t{10});
  big.where->op = schema::CompareOp::kGte;
  auto insert = [&](const std::string& id, std::int64_t n) {
    auto txn = a->BeginWrite();
    txn->Insert(cls, StoredColumns(cls), test::RowsStore::NewRow(id, n));
    txn->Commit();
  };
  insert("r1", 1);
  EXPECT_EQ(b->Count(cls, all), 1);
  EXPECT_EQ(b->Count(cls, big), 0);
  // The cache serves: a row slipped in behind crmd's back (no generation moved) is not counted.
  postgres::Connection raw(url);
  raw.Exec("INSERT INTO \"app_test\".\"Rows\" (\"objectId\", \"createdAt\", \"updatedAt\") VALUES ('raw', now(), now())");
  EXPECT_EQ(b->Count(cls, all), 1);
  insert("r2", 20);  // alone
  EXPECT_EQ(b->Count(cls, all), 3);
  EXPECT_EQ(b->Count(cls, big), 1);
  const WriteGroups::Job grouped = [&](WriteGroup& group) {  // a write queue's group member
    auto txn = group.BeginWrite(false);
    txn->Insert(cls, StoredColumns(cls), test::RowsStore::NewRow("r3", 30));
    txn->Commit();
  };
  ASSERT_EQ(a->CommitBatch({&grouped, 1})[0], CommitOutcome::kDurable);
  EXPECT_EQ(b->Count(cls, all), 4);
  EXPECT_EQ(b->Count(cls, big), 2);
  {
    auto txn = a->BeginWrite();
    auto row = test::RowsStore::NewRow("r1", 11);  // an update that moves a row into the where
    txn->Update(cls, StoredColumns(cls), row);
    txn->Commit();
  }
  EXPECT_EQ(b->Count(cls, big), 3);
  {
    auto txn = a->BeginWrite();
    EXPECT_TRUE(txn->Delete(cls, "r2"));
    txn->Commit();
  }
  EXPECT_EQ(b->Count(cls, all), 3);
  EXPECT_EQ(b->Count(cls, big), 2);
}

TEST(CountCacheKeyTest, DifferentParametersNeverShareAKey) {
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
