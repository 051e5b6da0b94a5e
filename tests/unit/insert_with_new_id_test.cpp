// Taken objectIds: an insert of a taken id fails alone with DuplicateKeyError and the transaction
// goes on; storage::InsertWithNewId (creates, sessions) then draws another id, runs `drawn` for it,
// and gives up with a StorageError after eight repeats instead of looping.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "rows_store.hpp"
#include "storage/database.hpp"

namespace crmd::storage {
namespace {

class InsertWithNewIdTest : public ::testing::TestWithParam<std::string> {};

TEST_P(InsertWithNewIdTest, DrawsAgainWhileTheIdIsTakenAndRunsDrawnForEachDraw) {
  test::RowsStore store("new-id", GetParam());
  store.Insert("AAAAAAAAAA");
  store.Insert("BBBBBBBBBB");
  auto txn = store.db->BeginWrite();
  int drawn = 0;
  std::vector<std::string> seen;
  const std::string ids[] = {"AAAAAAAAAA", "BBBBBBBBBB", "CCCCCCCCCC"};
  Row row = test::RowsStore::NewRow("");
  InsertWithNewId(*txn, store.cls, StoredColumns(store.cls), row,
                  [&](Row& r) { seen.push_back(r.object_id); }, [&] { return ids[drawn++]; });
  EXPECT_EQ(row.object_id, "CCCCCCCCCC");
  EXPECT_EQ(seen, (std::vector<std::string>{"AAAAAAAAAA", "BBBBBBBBBB", "CCCCCCCCCC"}));
  EXPECT_THROW(InsertWithNewId(*txn, store.cls, StoredColumns(store.cls), row, [](Row&) {},
                               [] { return std::string("AAAAAAAAAA"); }),
               StorageError);
  InsertWithNewId(*txn, store.cls, StoredColumns(store.cls), row, [](Row&) {});  // the real generator
  EXPECT_EQ(row.object_id.size(), ids::kObjectIdLength);
  txn->Commit();
  EXPECT_TRUE(store.Visible("CCCCCCCCCC"));
  EXPECT_TRUE(store.Visible(row.object_id));
}

TEST_P(InsertWithNewIdTest, AnInsertOfATakenIdFailsAloneAndTheTransactionGoesOn) {
  test::RowsStore store("taken-id", GetParam());
  store.Insert("AAAAAAAAAA");
  auto txn = store.db->BeginWrite();
  txn->Insert(store.cls, StoredColumns(store.cls), test::RowsStore::NewRow("BBBBBBBBBB"));
  EXPECT_THROW(txn->Insert(store.cls, StoredColumns(store.cls), test::RowsStore::NewRow("AAAAAAAAAA", 7)),
               DuplicateKeyError);
  txn->Insert(store.cls, StoredColumns(store.cls), test::RowsStore::NewRow("CCCCCCCCCC"));
  txn->Commit();
  EXPECT_TRUE(store.Visible("BBBBBBBBBB"));
  EXPECT_TRUE(store.Visible("CCCCCCCCCC"));
  EXPECT_EQ(std::get<std::int64_t>(CellOf(store.cls, *store.db->Get(store.cls, "AAAAAAAAAA"), "N")), 0);
}

TEST_P(InsertWithNewIdTest, InAWriteGroupATakenIdFailsOnlyItsOwnInsert) {
  test::RowsStore store("taken-id-group", GetParam());
  store.Insert("AAAAAAAAAA");
  // As the write queue runs writes: each in a savepoint of the group's transaction.
  const WriteGroups::Job job = [&](WriteGroup& group) {
    store.Insert("BBBBBBBBBB", 0, false, true, &group);
    auto txn = group.BeginWrite(/*exclusive=*/false);
    EXPECT_THROW(txn->Insert(store.cls, StoredColumns(store.cls), test::RowsStore::NewRow("AAAAAAAAAA", 7)),
                 DuplicateKeyError);
    txn->Insert(store.cls, StoredColumns(store.cls), test::RowsStore::NewRow("CCCCCCCCCC"));
    txn->Commit();
  };
  EXPECT_EQ(store.db->CommitBatch({&job, 1}), std::vector<storage::CommitOutcome>{storage::CommitOutcome::kDurable});
  EXPECT_TRUE(store.Visible("BBBBBBBBBB"));
  EXPECT_TRUE(store.Visible("CCCCCCCCCC"));
}

// Many rows at once (the request log's): 171 rows go as statements of 128, 32, 8, 2 and 1 rows on
// PostgreSQL; exactly the rows whose id was taken are reported, the others are all inserted.
TEST_P(InsertWithNewIdTest, InsertManyReportsExactlyTheRowsWhoseIdWasTaken) {
  test::RowsStore store("insert-many", GetParam());
  store.Insert("id00000003");
  store.Insert("id00000170");
  std::vector<Row> rows;
  for (int i = 0; i < 171; ++i) rows.push_back(test::RowsStore::NewRow(fmt::format("id{:08}", i), i));
  {
    auto txn = store.db->BeginWrite();
    EXPECT_EQ(txn->InsertMany(store.cls, StoredColumns(store.cls), rows), (std::vector<std::size_t>{3, 170}));
    txn->Commit();
  }
  for (int i = 0; i < 171; ++i) EXPECT_TRUE(store.Visible(fmt::format("id{:08}", i))) << i;
  EXPECT_EQ(std::get<std::int64_t>(CellOf(store.cls, *store.db->Get(store.cls, "id00000169"), "N")), 169);
  EXPECT_EQ(std::get<std::int64_t>(CellOf(store.cls, *store.db->Get(store.cls, "id00000003"), "N")), 0);  // the first one's

  // With new ids: every row is inserted, under ids of the generator's.
  std::vector<Row> more(40, test::RowsStore::NewRow(""));
  {
    auto again = store.db->BeginWrite();
    InsertManyWithNewIds(*again, store.cls, StoredColumns(store.cls), more);
    again->Commit();
  }
  ASSERT_EQ(more.size(), 40u);
  for (const auto& row : more) EXPECT_TRUE(store.Visible(row.object_id));
}

INSTANTIATE_TEST_SUITE_P(Stores, InsertWithNewIdTest, test::AllStores(), test::StoreName);

}  // namespace
}  // namespace crmd::storage
