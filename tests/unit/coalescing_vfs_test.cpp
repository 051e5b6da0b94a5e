// storage/sqlite/coalescing_vfs: a commit reaches the log in a few writes instead of two per page,
// and nothing read back (by another connection after the commit, or by the writer itself from a
// transaction too large for its cache) differs from what was written.
#include "storage/sqlite/coalescing_vfs.hpp"

#include <gtest/gtest.h>

#include <sqlite3.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <string>

#include "storage/database.hpp"
#include "storage/sqlite/connection.hpp"
#include "temp_dir.hpp"

namespace crmd::storage::sqlite {
namespace {

std::int64_t Int(Connection& c, const std::string& sql) {
  auto st = c.Prepare(sql);
  EXPECT_TRUE(st.Step()) << sql;
  return std::get<std::int64_t>(st.Column(0));
}

std::string Text(Connection& c, const std::string& sql) {
  auto st = c.Prepare(sql);
  EXPECT_TRUE(st.Step()) << sql;
  return std::get<std::string>(st.Column(0));
}

// Rows i = first..last, each a 600-character run of one letter, so their checksum is known here.
std::string InsertRows(int first, int last) {
  return "WITH RECURSIVE n(i) AS (SELECT " + std::to_string(first) + " UNION ALL SELECT i + 1 FROM n WHERE i < " +
         std::to_string(last) +
         ") INSERT INTO t SELECT i, substr(replace(hex(zeroblob(400)), '0', char(65 + i % 26)), 1, 600) FROM n";
}
constexpr const char* kChecksum = "SELECT coalesce(sum(i * unicode(v) + length(v)), 0) FROM t";
std::int64_t Expected(int first, int last) {
  std::int64_t sum = 0;
  for (std::int64_t i = first; i <= last; ++i) sum += i * (65 + i % 26) + 600;
  return sum;
}

TEST(CoalescingVfsTest, ACommitOfManyPagesReachesTheLogInAFewWrites) {
  const test::TempDir dir("vfs");
  Connection writer(dir.File("data.db"), /*sync_full=*/true);
  int log_pages = 0;
  writer.OnCommit([&](int frames) { log_pages = frames; });
  writer.Exec("CREATE TABLE t(i INTEGER PRIMARY KEY, v TEXT); CREATE INDEX t_v ON t(v)");
  const int before_pages = log_pages;
  const std::uint64_t before = CoalescedLogWrites();
  writer.Exec(InsertRows(1, 400));
  const std::uint64_t writes = CoalescedLogWrites() - before;
  const int pages = log_pages - before_pages;

  // SQLite itself writes each page as two calls (frame header, page): 2 * pages.
  ASSERT_GE(pages, 100);
  EXPECT_GE(writes, 1u);  // through this VFS
  EXPECT_LE(writes, static_cast<std::uint64_t>(pages * 4120 / (124 * 1024) + 2)) << pages << " pages";

  Connection reader(dir.File("data.db"), /*sync_full=*/true);
  EXPECT_EQ(Int(reader, "SELECT count(*) FROM t"), 400);
  EXPECT_EQ(Int(reader, kChecksum), Expected(1, 400));
  EXPECT_EQ(Text(reader, "PRAGMA integrity_check"), "ok");
}

TEST(CoalescingVfsTest, ATransactionLargerThanTheCacheReadsItsSpilledPagesBack) {
  const test::TempDir dir("vfs");
  {
    Connection writer(dir.File("data.db"), /*sync_full=*/true);
    writer.Exec("CREATE TABLE t(i INTEGER PRIMARY KEY, v TEXT); CREATE INDEX t_v ON t(v)");
    // Ten pages of cache for a transaction of ~700: SQLite writes pages to the log before the
    // commit (a spill) and reads them back from it while the transaction goes on.
    writer.Exec("PRAGMA cache_size=10");
    writer.Exec("BEGIN");
    writer.Exec(InsertRows(1, 2000));
    EXPECT_EQ(Int(writer, kChecksum), Expected(1, 2000));
    writer.Exec("UPDATE t SET v = lower(v) WHERE i % 7 = 0");
    writer.Exec("UPDATE t SET v = upper(v) WHERE i % 7 = 0");
    EXPECT_EQ(Int(writer, kChecksum), Expected(1, 2000));
    writer.Exec("COMMIT");

    // Spilled and rolled back: none of it is seen.
    writer.Exec("BEGIN");
    writer.Exec(InsertRows(2001, 4000));
    EXPECT_EQ(Int(writer, "SELECT count(*) FROM t"), 4000);
    writer.Exec("ROLLBACK");
    EXPECT_EQ(Int(writer, kChecksum), Expected(1, 2000));
  }
  Connection reader(dir.File("data.db"), /*sync_full=*/true);
  EXPECT_EQ(Int(reader, "SELECT count(*) FROM t"), 2000);
  EXPECT_EQ(Int(reader, kChecksum), Expected(1, 2000));
  EXPECT_EQ(Text(reader, "PRAGMA integrity_check"), "ok");
}

// A write error on the log, injected through the unix VFS's own seam for system calls: the pwrite
// calls on one file descriptor fail while `g_failing_fd` names it.
int g_failing_fd = -1;
int g_failing_errno = EIO;
sqlite3_syscall_ptr g_real_pwrite = nullptr;
sqlite3_syscall_ptr g_real_pwrite64 = nullptr;

ssize_t FailingPwrite(int fd, const void* data, size_t size, off_t offset) {
  if (fd == g_failing_fd) {
    errno = g_failing_errno;
    return -1;
  }
  return reinterpret_cast<ssize_t (*)(int, const void*, size_t, off_t)>(g_real_pwrite)(fd, data, size, offset);
}
ssize_t FailingPwrite64(int fd, const void* data, size_t size, off_t offset) {
  if (fd == g_failing_fd) {
    errno = g_failing_errno;
    return -1;
  }
  return reinterpret_cast<ssize_t (*)(int, const void*, size_t, off_t)>(g_real_pwrite64)(fd, data, size, offset);
}

// The descriptor this process has open on `path`.
int OpenFd(const std::string& path) {
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    if (std::filesystem::read_symlink(entry.path(), ec) == path) return std::stoi(entry.path().filename().string());
  }
  return -1;
}

// While it lives, pwrite calls on the log file at `path` fail with `error`.
class FailingLogWrites {
 public:
  FailingLogWrites(const std::string& path, int error) {
    vfs_ = sqlite3_vfs_find("unix");
    g_real_pwrite = vfs_->xGetSystemCall(vfs_, "pwrite");
    g_real_pwrite64 = vfs_->xGetSystemCall(vfs_, "pwrite64");
    if (g_real_pwrite) vfs_->xSetSystemCall(vfs_, "pwrite", reinterpret_cast<sqlite3_syscall_ptr>(FailingPwrite));
    if (g_real_pwrite64)
      vfs_->xSetSystemCall(vfs_, "pwrite64", reinterpret_cast<sqlite3_syscall_ptr>(FailingPwrite64));
    g_failing_errno = error;
    g_failing_fd = OpenFd(path);
  }
  // The unix VFS has the seam, and `path` is open here: tests assert this before relying on it.
  bool armed() const { return (g_real_pwrite || g_real_pwrite64) && g_failing_fd >= 0; }
  ~FailingLogWrites() {
    g_failing_fd = -1;
    if (g_real_pwrite) vfs_->xSetSystemCall(vfs_, "pwrite", nullptr);
    if (g_real_pwrite64) vfs_->xSetSystemCall(vfs_, "pwrite64", nullptr);
  }
  FailingLogWrites(const FailingLogWrites&) = delete;
  FailingLogWrites& operator=(const FailingLogWrites&) = delete;

 private:
  sqlite3_vfs* vfs_;
};

TEST(CoalescingVfsTest, ALogWriteThatFailsFailsTheCommitAndLeavesNothingBehind) {
  const test::TempDir dir("vfs");
  Connection writer(dir.File("data.db"), /*sync_full=*/true);
  writer.Exec("CREATE TABLE t(i INTEGER PRIMARY KEY, v TEXT); CREATE INDEX t_v ON t(v)");
  writer.Exec(InsertRows(1, 10));

  {
    const FailingLogWrites failing(dir.File("data.db-wal"), EIO);
    ASSERT_TRUE(failing.armed());
    // Small enough to be buffered whole: the write is tried, and fails, at the commit's sync.
    writer.Exec("BEGIN");
    writer.Exec(InsertRows(11, 60));
    EXPECT_THROW(writer.Exec("COMMIT"), StorageError);
  }
  if (writer.InTransaction()) writer.Exec("ROLLBACK");

  Connection reader(dir.File("data.db"), /*sync_full=*/true);
  EXPECT_EQ(Int(reader, kChecksum), Expected(1, 10));
  EXPECT_EQ(Int(writer, kChecksum), Expected(1, 10));
  // The writer goes on: the next commit writes over what the failed one left in the log.
  writer.Exec(InsertRows(11, 20));
  EXPECT_EQ(Int(reader, kChecksum), Expected(1, 20));
  EXPECT_EQ(Text(reader, "PRAGMA integrity_check"), "ok");
}

// Starts a transaction on `c` (cache of ten pages) whose inserts outgrow the cache: pages of rows
// 11..60 are written to the log early, into the log file's buffer (from an empty log).
void BeginWithFramesInTheBuffer(Connection& c) {
  c.Exec("PRAGMA wal_checkpoint(TRUNCATE)");
  c.Exec("PRAGMA cache_size=10");
  c.Exec("BEGIN");
  c.Exec(InsertRows(11, 60));
}

// A full disk met while writing out buffered frames in the middle of a transaction (here, when a
// statement reads back a page the transaction wrote early) ends the whole transaction: on "disk
// full" SQLite rolls back only the statement, and a later COMMIT would publish a log without them.
TEST(CoalescingVfsTest, AFailedWriteOfBufferedFramesRollsTheWholeTransactionBack) {
  const test::TempDir dir("vfs");
  Connection writer(dir.File("data.db"), /*sync_full=*/true);
  writer.Exec("CREATE TABLE t(i INTEGER PRIMARY KEY, v TEXT); CREATE INDEX t_v ON t(v)");
  writer.Exec(InsertRows(1, 10));
  BeginWithFramesInTheBuffer(writer);
  {
    const FailingLogWrites failing(dir.File("data.db-wal"), ENOSPC);
    ASSERT_TRUE(failing.armed());
    EXPECT_THROW(writer.Exec("INSERT INTO t SELECT i + 1000, v FROM t WHERE i BETWEEN 11 AND 20"), StorageError);
  }
  EXPECT_FALSE(writer.InTransaction());
  if (writer.InTransaction()) writer.Exec("ROLLBACK");
  EXPECT_EQ(Int(writer, kChecksum), Expected(1, 10));
  writer.Exec(InsertRows(11, 20));
  Connection reader(dir.File("data.db"), /*sync_full=*/true);
  EXPECT_EQ(Int(reader, kChecksum), Expected(1, 20));
  EXPECT_EQ(Text(reader, "PRAGMA integrity_check"), "ok");
}

// Frames a transaction wrote early and then rolled back are dropped at the rollback: another
// connection appends its commit at the same place, and the first connection's next read of the log
// must not write them over it.
TEST(CoalescingVfsTest, FramesOfARolledBackTransactionNeverOverwriteAnotherConnectionsCommit) {
  const test::TempDir dir("vfs");
  Connection first(dir.File("data.db"), /*sync_full=*/true);
  Connection second(dir.File("data.db"), /*sync_full=*/true);
  // No index: rows are appended, so the pages written early are full leaves never read again, and
  // the last of them are still in the buffer at the rollback.
  first.Exec("CREATE TABLE t(i INTEGER PRIMARY KEY, v TEXT)");
  first.Exec(InsertRows(1, 10));
  BeginWithFramesInTheBuffer(first);
  const std::uint64_t dropped = DroppedLogBytes();
  first.Exec("ROLLBACK");
  ASSERT_GT(DroppedLogBytes(), dropped);  // the case this test is about did happen
  second.Exec(InsertRows(2001, 2060));
  EXPECT_EQ(Int(first, kChecksum), Expected(1, 10) + Expected(2001, 2060));
  Connection reader(dir.File("data.db"), /*sync_full=*/true);
  EXPECT_EQ(Int(reader, kChecksum), Expected(1, 10) + Expected(2001, 2060));
  EXPECT_EQ(Text(reader, "PRAGMA integrity_check"), "ok");
}

// Without a sync per commit, SQLite publishes a commit before anything flushes the buffer, so the
// VFS must not be in use: its writes stay SQLite's own.
TEST(CoalescingVfsTest, NormalDurabilityDoesNotUseIt) {
  const test::TempDir dir("vfs");
  Connection writer(dir.File("data.db"), /*sync_full=*/false);
  const std::uint64_t before = CoalescedLogWrites();
  writer.Exec("CREATE TABLE t(i INTEGER PRIMARY KEY, v TEXT)");
  writer.Exec(InsertRows(1, 100));
  EXPECT_EQ(CoalescedLogWrites(), before);
  Connection reader(dir.File("data.db"), /*sync_full=*/false);
  EXPECT_EQ(Int(reader, kChecksum), Expected(1, 100));
}

}  // namespace
}  // namespace crmd::storage::sqlite
