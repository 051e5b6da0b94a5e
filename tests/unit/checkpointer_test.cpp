// storage/sqlite/checkpointer: the log is copied back by a pass on another thread, the writer copies
// only the short tail the pass left, after which the log starts over; a log past the `whole` limit
// is copied by the writer; a reader's snapshot keeps the log from starting over until it ends;
// nothing written is lost.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "schema/class_schema.hpp"
#include "storage/sqlite/sqlite_store.hpp"
#include "storage/database.hpp"
#include "storage/sqlite/checkpointer.hpp"
#include "storage/sqlite/connection.hpp"
#include "temp_dir.hpp"

namespace crmd::storage::sqlite {
namespace {

class CheckpointerTest : public ::testing::Test {
 protected:
  void Open(Checkpointer::Limits limits) {
    checkpointer_ = std::make_unique<Checkpointer>(path_, /*sync_full=*/false, limits);
    writer_ = std::make_unique<Connection>(path_, /*sync_full=*/false);
    writer_->Exec("CREATE TABLE IF NOT EXISTS t (x BLOB)");
    writer_->OnCommit([this](int frames) {
      frames_.push_back(frames);
      checkpointer_->AfterCommit(*writer_, frames);
    });
  }
  // One commit of a row about as large as a page: a page or two of log.
  void Write(int rows = 1) {
    writer_->Run("BEGIN IMMEDIATE");
    for (int i = 0; i < rows; ++i) writer_->Run("INSERT INTO t VALUES (zeroblob(3000))");
    writer_->Run("COMMIT");
  }
  std::int64_t Rows(Connection& c) {
    auto st = c.Prepare("SELECT count(*) FROM t");
    st.Step();
    return std::get<std::int64_t>(st.Column(0));
  }
  // A reader's snapshot taken once the log holds 30 frames, then writes on to 40 (the limits'
  // start) and the pass they start: the snapshot holds the pass back at its point of the log.
  std::unique_ptr<Connection> PassUnderAReader() {
    while (frames_.empty() || frames_.back() < 30) Write();
    auto reader = std::make_unique<Connection>(path_, false);
    reader->Run("BEGIN");
    EXPECT_GT(Rows(*reader), 0);
    while (frames_.back() < 40) Write();
    checkpointer_->WaitIdle();
    return reader;
  }

  test::TempDir dir_{"checkpointer"};
  const std::string path_ = dir_.File("data.db");
  std::unique_ptr<Checkpointer> checkpointer_;  // before writer_: outlives its commits
  std::unique_ptr<Connection> writer_;
  std::vector<int> frames_;  // the log's size after each commit
};

TEST_F(CheckpointerTest, APassCopiesTheLogAndTheWriterOnlyItsTailThenTheLogStartsOver) {
  Open({.start = 40, .tail = 30, .whole = 100'000});
  // The reader's snapshot leaves the tail of the writes after it to the writer (otherwise only
  // writes during the pass, which a test cannot time).
  auto reader = PassUnderAReader();
  EXPECT_EQ(checkpointer_->stats().passes, 1u);
  EXPECT_EQ(checkpointer_->stats().tails, 0u);
  Write();  // a tail of about ten pages: the writer copies what it may, the reader still holds the rest
  EXPECT_EQ(checkpointer_->stats().tails, 1u);
  EXPECT_GT(frames_.back(), 40);
  reader->Run("COMMIT");
  Write();  // now all of it
  EXPECT_EQ(checkpointer_->stats().tails, 2u);
  Write();  // so this commit writes the log from its start again
  EXPECT_LT(frames_.back(), 10);
  EXPECT_EQ(checkpointer_->stats().passes, 1u);
  EXPECT_EQ(checkpointer_->stats().whole, 0u);
  EXPECT_EQ(Rows(*writer_), static_cast<std::int64_t>(frames_.size()));  // one row per commit
}

// SQLite syncs the database file only at a checkpoint that reaches the log's end: a pass that
// cannot (writes after it, here a reader's snapshot) syncs what it copied itself, so the writer's
// tail copy does not flush it on the writer's time. A second copy gains nothing under the reader,
// so the pass ends there, however far the log is past `rest`.
TEST_F(CheckpointerTest, APassThatCannotReachTheLogsEndSyncsWhatItCopiedOnce) {
  Open({.start = 40, .tail = 30, .whole = 100'000, .rest = 0});
  auto reader = PassUnderAReader();
  EXPECT_EQ(checkpointer_->stats().passes, 1u);
  EXPECT_EQ(checkpointer_->stats().synced, 1u);
  EXPECT_EQ(checkpointer_->stats().rounds, 1u);
  EXPECT_EQ(checkpointer_->stats().tails, 0u);
  reader->Run("COMMIT");
}

TEST_F(CheckpointerTest, ALogStartedOverIsNotMistakenForTheTailOfTheOldOne) {
  Open({.start = 40, .tail = 10, .whole = 100'000});
  while (frames_.empty() || frames_.back() < 40) Write();
  checkpointer_->WaitIdle();  // the pass copied all of it
  ASSERT_EQ(checkpointer_->stats().passes, 1u);
  // The log starts over with one commit longer than the old log was: had the old log's count
  // stood, this would look like a short tail of it, and the writer would copy it all itself.
  Write(45);
  EXPECT_GT(frames_.back(), frames_[frames_.size() - 2]);
  checkpointer_->WaitIdle();
  EXPECT_EQ(checkpointer_->stats().passes, 2u);
  EXPECT_EQ(checkpointer_->stats().tails, 0u);
}

TEST_F(CheckpointerTest, ALogPastTheWholeLimitIsCopiedByTheWriter) {
  Open({.start = 40, .tail = 10, .whole = 60});
  Write(100);  // one commit of ~100 pages: past `whole` at once
  EXPECT_EQ(checkpointer_->stats().whole, 1u);
  EXPECT_EQ(checkpointer_->stats().passes, 0u);
  Write();
  EXPECT_LT(frames_.back(), 10);  // copied whole, so the log started over
}

TEST_F(CheckpointerTest, AReadersSnapshotKeepsTheLogUntilItEndsAndNothingIsLost) {
  Open({.start = 40, .tail = 10, .whole = 100'000});
  Write();
  Connection reader(path_, false);
  reader.Run("BEGIN");
  EXPECT_EQ(Rows(reader), 1);  // the snapshot is taken here and holds the log's first pages
  for (int i = 0; i < 120; ++i) {
    Write();
    checkpointer_->WaitIdle();
  }
  EXPECT_TRUE(std::is_sorted(frames_.begin(), frames_.end()));  // never started over under the reader
  EXPECT_GT(checkpointer_->stats().passes, 1u);
  EXPECT_EQ(Rows(reader), 1);
  reader.Run("COMMIT");
  for (int i = 0; i < 3; ++i) {  // the next pass copies all of it, and a later write starts it over
    Write();
    checkpointer_->WaitIdle();
  }
  EXPECT_LT(frames_.back(), 10);  // the reader gone, the next tail copy lets it start over
  EXPECT_EQ(Rows(*writer_), 124);
  auto check = writer_->Prepare("PRAGMA integrity_check");
  ASSERT_TRUE(check.Step());
  EXPECT_EQ(check.ColumnText(0), "ok");
}

// The store's own wiring: its writer's commits report to a checkpointer with the default limits, and
// under steady writes the log keeps starting over instead of growing to the whole-log limit.
TEST(StoreCheckpointTest, UnderSteadyWritesTheLogStaysNearItsStartSize) {
  test::TempDir dir("store-checkpoint");
  const std::string path = dir.File("data.db");
  auto db = OpenSqlite(path, Durability::kNormal, 2);
  auto cls = schema::ClassSchema::NewImplicit("Pages");
  cls.fields.emplace_back("Text", schema::FieldDef{schema::FieldType::kString, {}});
  {
    auto txn = db->BeginWrite(/*exclusive=*/true);
    txn->SaveClass(nullptr, cls);
    txn->Commit();
  }
  const auto columns = StoredColumns(cls);
  const std::string text(3000, 'x');  // a page of log per row, about
  constexpr int kCommits = 240, kRowsPerCommit = 50;  // ~12,000 pages: three times a pass's start
  std::uintmax_t largest = 0;
  for (int c = 0; c < kCommits; ++c) {
    auto txn = db->BeginWrite();
    for (int r = 0; r < kRowsPerCommit; ++r) {
      Row row;
      row.object_id = fmt::format("p{}", c * kRowsPerCommit + r);
      row.created_at = row.updated_at = "2026-01-01T00:00:00.000Z";
      row.cells = {std::monostate{}, std::monostate{}, text};
      txn->Insert(cls, columns, row);
    }
    txn->Commit();
    largest = std::max(largest, std::filesystem::file_size(path + "-wal"));
  }
  // Writes this fast (no fsync) outrun the passes: the writer copies the log whole at 8,000 pages,
  // so it never passes 8,000 pages and one commit (~33 MiB). Never starting over, it would have
  // reached ~47 MiB here.
  EXPECT_LT(largest, 8200u * 4120);
  EXPECT_GE(largest, 4000u * 4096);  // it did reach the start, so passes ran
  EXPECT_EQ(db->Count(cls, schema::Query{}), kCommits * kRowsPerCommit);
  EXPECT_TRUE(db->CheckIntegrity());
}

}  // namespace
}  // namespace crmd::storage::sqlite
