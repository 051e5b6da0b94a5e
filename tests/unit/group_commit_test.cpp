// storage/sqlite/group_commit through the Database interface: concurrent writers share commits,
// a rolled-back writer undoes only its own work, and every Commit() that returned is durable and
// visible to readers.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "schema/class_schema.hpp"
#include "storage/database.hpp"
#include "temp_dir.hpp"
#include "util/time.hpp"

namespace crmd::storage {
namespace {

TEST(GroupCommitTest, ConcurrentWritersKeepExactlyTheirCommittedRows) {
  const test::TempDir dir("group");
  {
    auto db = OpenSqlite(dir.File("data.db"), Durability::kNormal, 4);
    auto cls = schema::ClassSchema::NewImplicit("Rows");
    cls.fields.emplace_back("N", schema::FieldDef{schema::FieldType::kNumber, {}});
    {
      auto txn = db->BeginWrite(/*exclusive=*/true);
      txn->SaveClass(nullptr, cls);
      txn->Commit();
    }
    constexpr int kThreads = 8, kPerThread = 60;
    std::atomic<int> visible_after_commit{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < kPerThread; ++i) {
          const int n = t * kPerThread + i;
          Row row;
          row.object_id = "r" + std::to_string(n);
          row.created_at = row.updated_at = timeutil::NowIso();
          row.cells = {std::monostate{}, std::monostate{}, std::int64_t{n}};
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

    query::Query all;
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
