// storage/sqlite/connection: the statement cache starts over when full, but never finalizes a
// statement that is still lent out (a sorted read steps one while others are prepared); an
// identifier is quoted with its quotes doubled, and SQLite reads it back as the same name.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include "storage/database.hpp"

#include "storage/sqlite/connection.hpp"
#include "temp_dir.hpp"

namespace crmd::storage::sqlite {
namespace {

TEST(ConnectionTest, AFullStatementCacheNeverFinalizesAStatementInUse) {
  const test::TempDir dir("conn");
  {
    Connection c(dir.File("data.db"), /*sync_full=*/false);
    c.Exec("CREATE TABLE t(x); INSERT INTO t VALUES (1), (2), (3)");
    auto held = c.Prepare("SELECT x FROM t ORDER BY x");
    ASSERT_TRUE(held.Step());
    EXPECT_EQ(std::get<std::int64_t>(held.Column(0)), 1);
    // More distinct statements than the cache holds, while `held` is in the middle of its rows.
    for (int i = 0; i < 1200; ++i) {
      auto st = c.Prepare("SELECT " + std::to_string(i));
      ASSERT_TRUE(st.Step());
      ASSERT_EQ(std::get<std::int64_t>(st.Column(0)), i);
    }
    ASSERT_TRUE(held.Step());
    EXPECT_EQ(std::get<std::int64_t>(held.Column(0)), 2);
    ASSERT_TRUE(held.Step());
    EXPECT_EQ(std::get<std::int64_t>(held.Column(0)), 3);
    EXPECT_FALSE(held.Step());
  }
  {
    // Once nothing is lent out, a full cache starts over and statements are cached again.
    Connection c(dir.File("data.db"), /*sync_full=*/false);
    for (int i = 0; i < 1200; ++i) {
      auto st = c.Prepare("SELECT " + std::to_string(i) + " + 1");
      ASSERT_TRUE(st.Step());
      ASSERT_EQ(std::get<std::int64_t>(st.Column(0)), i + 1);
    }
  }
}

// Issue 33: a write's statement is found by a key cheaper than its text. The text is made once;
// once the cache starts over (full), the key no longer names a finalized statement: the text is
// made and prepared again.
TEST(ConnectionTest, AStatementFoundByKeyIsMadeOnceAndAgainAfterTheCacheStartsOver) {
  const test::TempDir dir("conn");
  Connection c(dir.File("data.db"), /*sync_full=*/false);
  int made = 0;
  auto by_key = [&] {
    auto st = c.PrepareByKey("seven", [&] {
      ++made;
      return std::string("SELECT 7");
    });
    EXPECT_TRUE(st.Step());
    EXPECT_EQ(std::get<std::int64_t>(st.Column(0)), 7);
  };
  by_key();
  by_key();
  by_key();
  EXPECT_EQ(made, 1);
  for (int i = 0; i < 1200; ++i) c.Prepare("SELECT " + std::to_string(i));  // the cache starts over
  by_key();
  EXPECT_EQ(made, 2);
}

// Issue 22 (found under TSan's slowness): a read whose deadline passes while SQLite prepares its
// statement (reading a schema another connection changed runs SQLite's machine, and so the
// progress handler) is a slow read,
// ReadTimedOut, which moves it off the network thread; not a fault answered 500.
TEST(ConnectionTest, ADeadlinePassingDuringPrepareIsAReadTimeout) {
  const test::TempDir dir("conn");
  Connection reader(dir.File("data.db"), /*sync_full=*/false);
  reader.BoundReads();
  {
    // Another connection changes the schema: the reader's next prepare reads it all again.
    Connection writer(dir.File("data.db"), /*sync_full=*/false);
    std::string tables;
    for (int i = 0; i < 600; ++i) tables += "CREATE TABLE t" + std::to_string(i) + "(a, b, c);";
    writer.Exec(tables);
  }
  const ReadDeadline passed(std::chrono::steady_clock::now() - std::chrono::seconds(1));
  EXPECT_THROW(reader.Prepare("SELECT a FROM t599"), ReadTimedOut);
}

TEST(ConnectionTest, QuotedIdentifiersDoubleTheirQuotes) {
  EXPECT_EQ(Quote("City"), "\"City\"");
  EXPECT_EQ(Quote(""), "\"\"");
  EXPECT_EQ(Quote("a\"b"), "\"a\"\"b\"");
  EXPECT_EQ(Quote("\"\""), "\"\"\"\"\"\"");
  std::string out = "x ";
  AppendQuoted("end\"", out);
  EXPECT_EQ(out, "x \"end\"\"\"");

  const test::TempDir dir("quote");
  Connection c(dir.File("q.db"), /*sync_full=*/false);
  const std::string odd = "we\"ird \"\" name\"";
  c.Exec("CREATE TABLE " + Quote(odd) + " (" + Quote(odd) + " TEXT)");
  auto st = c.Prepare("SELECT name FROM sqlite_schema WHERE type = 'table'");
  ASSERT_TRUE(st.Step());
  EXPECT_EQ(st.ColumnText(0), odd);
  auto column = c.Prepare("SELECT * FROM " + Quote(odd));
  EXPECT_EQ(column.ColumnName(0), odd);
}

}  // namespace
}  // namespace crmd::storage::sqlite

namespace crmd::storage::sqlite {
namespace {

// Issue 17 #18: out of descriptors, opening a store throws OutOfDescriptors (answered 503), not a
// plain storage fault (500).
TEST(ConnectionTest, OutOfDescriptorsIsItsOwnError) {
  const test::TempDir dir("nofile");
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &saved), 0);
  std::vector<int> held;
  rlimit tight = saved;
  tight.rlim_cur = 64;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &tight), 0);
  for (int fd; (fd = dup(0)) >= 0;) held.push_back(fd);  // every descriptor taken
  bool out_of_descriptors = false;
  try {
    Connection c(dir.File("data.db"), /*sync_full=*/false);
  } catch (const OutOfDescriptors&) {
    out_of_descriptors = true;
  } catch (const StorageError&) {
  }
  for (int fd : held) close(fd);
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &saved), 0);
  EXPECT_TRUE(out_of_descriptors);
}

}  // namespace
}  // namespace crmd::storage::sqlite
