// WriteTransaction::GetFields (an update's read of the row it changes): the row's own columns and
// the named fields' cells, whatever their order, every other field absent; a field the table does
// not have yet (the last ones) reads as absent, a column the snapshot does not have yet (the table
// is ahead) is not read; a column out of its schema place, or missing from the middle, is refused,
// as Get refuses it.
#include <gtest/gtest.h>

#include "storage/database.hpp"
#include "storage/sqlite/sqlite_store.hpp"
#include "temp_dir.hpp"

namespace crmd::storage {
namespace {

class GetFieldsTest : public ::testing::Test {
 protected:
  GetFieldsTest() {
    db_ = OpenSqlite(dir_.File("data.db"), Durability::kNormal, 2);
    cls_.name = "Things";
    cls_.fields = {{"A", {schema::FieldType::kString, {}}},
                   {"R", {schema::FieldType::kRelation, "Things"}},  // no column of its own
                   {"N", {schema::FieldType::kNumber, {}}},
                   {"B", {schema::FieldType::kString, {}}}};
    auto txn = db_->BeginWrite(/*exclusive=*/true);
    txn->SaveClass(nullptr, cls_);
    Row row;
    row.object_id = "t1";
    row.created_at = row.updated_at = "2026-01-01T00:00:00.000Z";
    row.acl = R"({"*":{"read":true}})";
    row.nulls = {"B"};
    row.cells = {std::string("a text"), std::int64_t{7}, std::monostate{}};
    txn->Insert(cls_, {"A", "N", "B"}, row);
    txn->Commit();
  }

  std::optional<Row> Read(const schema::ClassSchema& cls, const std::vector<std::string_view>& fields) {
    auto txn = db_->BeginWrite();
    return txn->GetFields(cls, "t1", fields);
  }

  test::TempDir dir_{"get-fields"};
  std::unique_ptr<Database> db_;
  schema::ClassSchema cls_;
};

TEST_F(GetFieldsTest, ReadsTheRowsOwnColumnsAndOnlyTheNamedCells) {
  const auto full = [&] {
    auto txn = db_->BeginWrite();
    return txn->Get(cls_, "t1");
  }();
  ASSERT_TRUE(full.has_value());

  auto only_n = Read(cls_, {"N"});
  ASSERT_TRUE(only_n.has_value());
  EXPECT_EQ(only_n->object_id, "t1");
  EXPECT_EQ(only_n->created_at, full->created_at);
  EXPECT_EQ(only_n->updated_at, full->updated_at);
  EXPECT_EQ(only_n->acl, full->acl);
  EXPECT_EQ(only_n->nulls, std::vector<std::string>{"B"});
  ASSERT_EQ(only_n->cells.size(), full->cells.size());
  EXPECT_EQ(only_n->cells, (std::vector<Cell>{std::monostate{}, std::int64_t{7}, std::monostate{}}));

  // In any order, with names the class does not have (a new field, an operator on nothing).
  auto both = Read(cls_, {"Nope", "A", "N"});
  ASSERT_TRUE(both.has_value());
  EXPECT_EQ(both->cells, full->cells);

  auto txn = db_->BeginWrite();
  EXPECT_FALSE(txn->GetFields(cls_, "missing", {"A"}).has_value());
}

TEST_F(GetFieldsTest, AFieldTheTableDoesNotHaveYetIsAbsentAndAMisplacedColumnIsRefused) {
  schema::ClassSchema ahead = cls_;  // a snapshot with a field whose column is not there yet
  ahead.fields.push_back({"Later", {schema::FieldType::kString, {}}});
  auto read = Read(ahead, {"Later", "A"});
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->cells, (std::vector<Cell>{std::string("a text"), std::monostate{}, std::monostate{},
                                            std::monostate{}}));

  schema::ClassSchema gap = ahead;  // a field missing from the middle, not the end: refused
  gap.fields.insert(gap.fields.begin() + 1, {"Between", {schema::FieldType::kString, {}}});
  EXPECT_THROW(Read(gap, {"Between"}), StorageError);
  EXPECT_THROW(Read(gap, {"B"}), StorageError);

  schema::ClassSchema swapped = cls_;  // the schema's order no longer the table's
  std::swap(swapped.fields[0], swapped.fields[2]);
  EXPECT_THROW(Read(swapped, {"N"}), StorageError);
  EXPECT_THROW(Read(swapped, {"A"}), StorageError);
}

TEST_F(GetFieldsTest, ASnapshotTakenJustBeforeNewFieldsCommittedReadsTheTableWithoutThem) {
  // A reader that took the schema before a write unit committed new fields meets their columns.
  schema::ClassSchema grown = cls_;
  grown.fields.push_back({"Later", {schema::FieldType::kString, {}}});
  {
    auto txn = db_->BeginWrite(/*exclusive=*/true);
    txn->SaveClass(&cls_, grown);
    txn->Commit();
  }
  const auto behind = db_->Get(cls_, "t1");  // cls_: the older snapshot
  ASSERT_TRUE(behind.has_value());
  EXPECT_EQ(behind->cells, (std::vector<Cell>{std::string("a text"), std::int64_t{7}, std::monostate{}}));
  auto read = Read(cls_, {"N"});
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->cells, (std::vector<Cell>{std::monostate{}, std::int64_t{7}, std::monostate{}}));
  schema::Query all;
  all.limit = -1;
  std::size_t rows = 0;
  db_->Find(cls_, all, [&](Row& row) {
    EXPECT_EQ(row.cells.size(), 3u);
    return ++rows, true;
  });
  EXPECT_EQ(rows, 1u);
}

}  // namespace
}  // namespace crmd::storage
