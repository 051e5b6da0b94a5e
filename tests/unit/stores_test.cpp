// storage::Stores (issue 22): the applications' stores behind one interface; the SQLite kind keeps
// `<data>/apps/<appId>/data.db` and answers which stores exist and which hold trigger work.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "storage/stores.hpp"
#include "temp_dir.hpp"

namespace crmd::storage {
namespace {

TEST(StoresTest, SqliteStoresOpenListAndReportOutboxes) {
  test::TempDir dir("stores");
  auto stores = SqliteStores(dir.path().string(), Durability::kNormal, 2);
  EXPECT_TRUE(stores->List().empty());
  std::filesystem::create_directories(dir.path() / "apps" / "no-store");  // a folder with files only
  {
    auto db = stores->Open("app1");
    ASSERT_TRUE(db);
    EXPECT_TRUE(std::filesystem::exists(dir.path() / "apps" / "app1" / "data.db"));
    EXPECT_FALSE(stores->HasOutboxEntries("app1"));
    auto txn = db->BeginWrite();
    txn->outbox().AddOutbox(0, "{}");
    txn->Commit();
  }
  EXPECT_TRUE(stores->HasOutboxEntries("app1"));
  EXPECT_FALSE(stores->HasOutboxEntries("nobody"));
  EXPECT_EQ(stores->List(), std::vector<std::string>{"app1"});
}

}  // namespace
}  // namespace crmd::storage
