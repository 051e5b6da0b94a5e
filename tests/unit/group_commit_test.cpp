// storage/sqlite/group_commit through the Database interface: concurrent writers share commits,
// a rolled-back writer undoes only its own work, and every Commit() that returned is durable and
// visible to readers.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "rows_store.hpp"

namespace crmd::storage {
namespace {

TEST(GroupCommitTest, ConcurrentWritersKeepExactlyTheirCommittedRows) {
  {
    test::RowsStore store("group");
    auto& db = store.db;
    const auto& cls = store.cls;
    constexpr int kThreads = 8, kPerThread = 60;
    std::atomic<int> visible_after_commit{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < kPerThread; ++i) {
          const int n = t * kPerThread + i;
          const Row row = test::RowsStore::NewRow(fmt::format("r{}", n), n);
          auto txn = db->BeginWrite();
          txn->Insert(cls, StoredColumns(cls), row);
          if (n % 3 == 0) continue;  // destroyed without Commit: rolled back alone
          txn->Commit();
          // Acknowledged means committed: another connection sees it at once.
          if (db->Get(cls, row.object_id)) ++visible_after_commit;
        }
      });
    }
    for (auto& th : threads) th.join();

    schema::Query all;
    all.limit = -1;
    int kept = 0, rolled_back_present = 0;
    db->Find(cls, all, [&](const Row& row) {
      ++kept;
      if (std::get<std::int64_t>(row.cells[2]) % 3 == 0) ++rolled_back_present;
      return true;
    });
    const int expected = kThreads * kPerThread - (kThreads * kPerThread + 2) / 3;
    EXPECT_EQ(kept, expected);
    EXPECT_EQ(rolled_back_present, 0);
    EXPECT_EQ(visible_after_commit.load(), expected);
    EXPECT_TRUE(db->CheckIntegrity());
  }
}

}  // namespace
}  // namespace crmd::storage
