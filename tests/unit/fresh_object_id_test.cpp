// Taken objectIds: storage::FreshObjectId draws a generated id again while a row has it, and fails
// instead of looping; an insert of a taken id fails alone with DuplicateKeyError (what a create
// catches to draw again), and the transaction goes on.
#include <gtest/gtest.h>

#include <string>

#include "rows_store.hpp"
#include "storage/database.hpp"

namespace crmd::storage {
namespace {

TEST(FreshObjectIdTest, DrawsAgainWhileTheIdIsTaken) {
  test::RowsStore store("fresh-id");
  store.Insert("AAAAAAAAAA");
  store.Insert("BBBBBBBBBB");
  auto txn = store.db->BeginWrite();
  int drawn = 0;
  const std::string ids[] = {"AAAAAAAAAA", "BBBBBBBBBB", "CCCCCCCCCC"};
  EXPECT_EQ(FreshObjectId(*txn, store.cls, [&] { return ids[drawn++]; }), "CCCCCCCCCC");
  EXPECT_EQ(drawn, 3);
  EXPECT_THROW(FreshObjectId(*txn, store.cls, [] { return std::string("AAAAAAAAAA"); }), StorageError);
  EXPECT_EQ(FreshObjectId(*txn, store.cls).size(), ids::kObjectIdLength);
}

TEST(FreshObjectIdTest, AnInsertOfATakenIdFailsAloneAndTheTransactionGoesOn) {
  test::RowsStore store("taken-id");
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

TEST(FreshObjectIdTest, InAWriteGroupATakenIdFailsOnlyItsOwnInsert) {
  test::RowsStore store("taken-id-group");
  store.Insert("AAAAAAAAAA");
  auto group = store.db->BeginWriteGroup();  // as the write queue runs writes: each in a savepoint
  store.Insert("BBBBBBBBBB");
  {
    auto txn = store.db->BeginWrite();
    EXPECT_THROW(txn->Insert(store.cls, StoredColumns(store.cls), test::RowsStore::NewRow("AAAAAAAAAA", 7)),
                 DuplicateKeyError);
    txn->Insert(store.cls, StoredColumns(store.cls), test::RowsStore::NewRow("CCCCCCCCCC"));
    txn->Commit();
  }
  const auto epoch = group->Epoch();
  group->Flush();
  EXPECT_FALSE(group->Failed(epoch));
  EXPECT_TRUE(store.Visible("BBBBBBBBBB"));
  EXPECT_TRUE(store.Visible("CCCCCCCCCC"));
}

}  // namespace
}  // namespace crmd::storage
