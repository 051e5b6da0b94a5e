// storage::FreshObjectId: a generated id that a row already has is drawn again, and a generator
// that never yields a free id fails instead of looping.
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

}  // namespace
}  // namespace crmd::storage
