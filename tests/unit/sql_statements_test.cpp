// The statements both stores build alike (storage/sql/*_statements.hpp, issue 32), spelled in
// each dialect: placeholders in text order (SQLite binds `?` by position), PostgreSQL's tables in
// the application's schema, lists bound as one value in each store's list form; then the same
// statements run on both stores, bound as each store binds them.
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>

#include <boost/json.hpp>

#include "schema/query.hpp"
#include "storage/postgres/pg_dialect.hpp"
#include "storage/sql/aggregate_statements.hpp"
#include "storage/sql/class_statements.hpp"
#include "storage/sql/outbox_statements.hpp"
#include "storage/sql/record_statements.hpp"
#include "storage/sql/relation_statements.hpp"
#include "storage/sqlite/where_sql.hpp"
#include "test_store.hpp"

namespace crmd::storage {
namespace {

const sql::Dialect& LiteSql() { return sqlite::SqliteDialect(); }

const sql::Dialect& PgSql() {
  static const postgres::PgDialect dialect("\"app_one\"");
  return dialect;
}

// The numbers of the `$n` placeholders, in the order they appear.
std::vector<int> DollarNumbers(const std::string& sql) {
  std::vector<int> out;
  static const std::regex dollar(R"(\$(\d+))");
  for (auto it = std::sregex_iterator(sql.begin(), sql.end(), dollar); it != std::sregex_iterator(); ++it)
    out.push_back(std::stoi((*it)[1]));
  return out;
}

std::vector<int> PlaceholdersUpTo(int n) {
  std::vector<int> out;
  for (int i = 1; i <= n; ++i) out.push_back(i);
  return out;
}

std::size_t Occurrences(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

schema::ClassSchema DealSchema() {
  schema::ClassSchema cls;
  cls.name = "Deal";
  schema::FieldDef amount;
  amount.type = schema::FieldType::kNumber;
  cls.fields.emplace_back("amount", amount);
  return cls;
}

TEST(SqlStatementsTest, AnInsertNamesTheOwnColumnsThenTheFieldsAndBindsThemInThatOrder) {
  const std::vector<std::string> columns{"title", "amount"};
  const std::string lite = sql::InsertRow(LiteSql(), "Deal", columns, sql::OnDuplicateId::kFail);
  EXPECT_EQ(lite,
            "INSERT INTO \"Deal\" (\"objectId\", \"createdAt\", \"updatedAt\", \"_acl\", \"_rperm\", \"_wperm\", "
            "\"_nulls\", \"title\", \"amount\") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
  const std::string pg = sql::InsertRow(PgSql(), "Deal", columns, sql::OnDuplicateId::kSkip);
  EXPECT_TRUE(pg.starts_with("INSERT INTO \"app_one\".\"Deal\" (\"objectId\"")) << pg;
  EXPECT_EQ(DollarNumbers(pg), PlaceholdersUpTo(sql::kInsertFirstValue + 1));
  EXPECT_TRUE(pg.ends_with(") ON CONFLICT DO NOTHING RETURNING 1")) << pg;
}

TEST(SqlStatementsTest, AnUpdateBindsTheOwnColumnsThenTheFieldsThenTheIdLast) {
  const std::vector<std::string> columns{"title", "amount"};
  const std::string lite = sql::UpdateRow(LiteSql(), "Deal", columns);
  EXPECT_EQ(lite,
            "UPDATE \"Deal\" SET \"updatedAt\" = ?, \"_acl\" = ?, \"_rperm\" = ?, \"_wperm\" = ?, \"_nulls\" = ?, "
            "\"title\" = ?, \"amount\" = ? WHERE \"objectId\" = ?");
  const std::string pg = sql::UpdateRow(PgSql(), "Deal", columns);
  EXPECT_EQ(DollarNumbers(pg), PlaceholdersUpTo(sql::kUpdateFirstValue + 2));
  EXPECT_TRUE(pg.find("\"amount\" = $" + std::to_string(sql::kUpdateFirstValue + 1) + " WHERE") != std::string::npos)
      << pg;
  EXPECT_TRUE(pg.ends_with("WHERE \"objectId\" = $" + std::to_string(sql::kUpdateFirstValue + 2))) << pg;
}

TEST(SqlStatementsTest, AnUpdateWhereBindsItsValuesBeforeTheWhereAndNumbersTheWhereAfterThem) {
  const auto cls = DealSchema();
  const schema::Expr where = schema::FieldEquals("amount", Cell(std::int64_t{5}));
  const std::vector<std::string> columns{"amount"};
  const std::vector<Cell> cells{Cell(std::int64_t{7})};
  for (const sql::Dialect* d : {&LiteSql(), &PgSql()}) {
    const auto update = sql::UpdateWhere(*d, cls, where, columns, cells);
    ASSERT_EQ(update.params.size(), 2u) << update.sql;
    EXPECT_EQ(update.params[0], Cell(std::int64_t{7})) << update.sql;
    EXPECT_EQ(update.params[1], Cell(std::int64_t{5})) << update.sql;
  }
  const auto pg = sql::UpdateWhere(PgSql(), cls, where, columns, cells);
  EXPECT_EQ(DollarNumbers(pg.sql), PlaceholdersUpTo(2)) << pg.sql;
  EXPECT_TRUE(pg.sql.starts_with("UPDATE \"app_one\".\"Deal\" AS t0 SET \"amount\" = $1 WHERE ")) << pg.sql;
}

TEST(SqlStatementsTest, SettingAnAclBindsItAndItsGranteesInEachStoresListForm) {
  const auto cls = DealSchema();
  const schema::Expr where = schema::FieldEquals("amount", Cell(std::int64_t{5}));
  const std::string acl = R"({"u1":{"read":true,"write":true},"*":{"read":true}})";
  const auto lite = sql::SetAclWhere(LiteSql(), cls, where, acl);
  ASSERT_EQ(lite.params.size(), 4u);
  EXPECT_EQ(lite.params[0], Cell(acl));
  EXPECT_EQ(lite.params[1], Cell(std::string(R"(["u1","*"])")));
  EXPECT_EQ(lite.params[2], Cell(std::string(R"(["u1"])")));
  const auto pg = sql::SetAclWhere(PgSql(), cls, where, acl);
  ASSERT_EQ(pg.params.size(), 4u);
  EXPECT_EQ(pg.params[1], Cell(std::string(R"({"u1","*"})")));
  EXPECT_EQ(pg.params[2], Cell(std::string(R"({"u1"})")));
  EXPECT_EQ(DollarNumbers(pg.sql), PlaceholdersUpTo(4)) << pg.sql;
  // Public: the ACL and both lists are NULL.
  const auto open = sql::SetAclWhere(PgSql(), cls, where, std::nullopt);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(open.params[static_cast<std::size_t>(i)], Cell(std::monostate{}));
}

TEST(SqlStatementsTest, TheNullsColumnIsWhatEachDialectsHoldsNullSearches) {
  EXPECT_EQ(sql::Nulls(LiteSql(), {"a", "b"}), Cell(std::string(",a,b,")));
  EXPECT_EQ(sql::Nulls(PgSql(), {"a", "b"}), Cell(std::string(R"({"a","b"})")));
  EXPECT_EQ(sql::Nulls(LiteSql(), {}), Cell(std::monostate{}));
  EXPECT_EQ(sql::Nulls(PgSql(), {}), Cell(std::monostate{}));
}

TEST(SqlStatementsTest, IdListsAreOneBoundValueWhateverTheirLength) {
  const std::string select = sql::SelectRows(LiteSql(), "Deal");
  EXPECT_EQ(select, "SELECT t0.* FROM \"Deal\" AS t0");
  const auto lite = sql::GetMany(LiteSql(), select, {"a", "b", "c"});
  EXPECT_EQ(lite.sql, select + " WHERE t0.\"objectId\" IN (SELECT value FROM json_each(?))");
  EXPECT_EQ(lite.params, std::vector<Cell>{Cell(std::string(R"(["a","b","c"])"))});
  const auto pg = sql::RelationOwners(PgSql(), "Deal", "owners", {"a", "b"});
  EXPECT_EQ(pg.sql,
            "SELECT DISTINCT \"owningId\" FROM \"app_one\".\"_Join:owners:Deal\" WHERE \"relatedId\" = ANY($1::text[])");
  EXPECT_EQ(pg.params, std::vector<Cell>{Cell(std::string(R"({"a","b"})"))});
}

TEST(SqlStatementsTest, APageBindsLimitAndOffsetAfterTheWhere) {
  sql::SqlFragment where{"t0.\"amount\" = $1 AND t0.\"title\" = $2", {Cell(std::int64_t{1}), Cell(std::string("x"))}};
  const std::string select = sql::SelectRows(PgSql(), "Deal", "layout 3");
  EXPECT_EQ(select, "SELECT /* layout 3 */ t0.* FROM \"app_one\".\"Deal\" AS t0");
  EXPECT_EQ(sql::FindPage(PgSql(), select, where, " ORDER BY t0.\"amount\" ASC"),
            select + " WHERE " + where.sql + " ORDER BY t0.\"amount\" ASC LIMIT $3 OFFSET $4");
  sql::SqlFragment lite_where{"t0.\"amount\" = ?", {Cell(std::int64_t{1})}};
  EXPECT_EQ(sql::FindPage(LiteSql(), "S", lite_where, ""), "S WHERE t0.\"amount\" = ? LIMIT ? OFFSET ?");
}

TEST(SqlStatementsTest, TheStoresOwnTablesAreInTheApplicationsSchemaOnPostgresql) {
  for (const std::string& text : {sql::AddOutbox(PgSql()), sql::GetOutbox(PgSql()), sql::SetOutbox(PgSql()),
                                  sql::RemoveOutbox(PgSql()), sql::ReadOutbox(PgSql())})
    EXPECT_EQ(Occurrences(text, "\"app_one\".\"_crmd_outbox\""), 1u) << text;
  for (const std::string& text : {sql::LoadClasses(PgSql()), sql::SaveClass(PgSql()), sql::DropClass(PgSql())})
    EXPECT_EQ(Occurrences(text, "\"app_one\".\"_crmd_schema\""), 1u) << text;
  EXPECT_EQ(sql::AddOutbox(LiteSql()), "INSERT INTO \"_crmd_outbox\" (lane, payload) VALUES (?, ?) RETURNING id");
  // Payload before id, as they appear.
  EXPECT_EQ(sql::SetOutbox(PgSql()), "UPDATE \"app_one\".\"_crmd_outbox\" SET payload = $1 WHERE id = $2");
  EXPECT_EQ(sql::SaveClass(LiteSql()),
            "INSERT INTO \"_crmd_schema\" (\"className\", definition) VALUES (?, ?) "
            "ON CONFLICT (\"className\") DO UPDATE SET definition = excluded.definition");
}

TEST(SqlStatementsTest, AnAggregateSpellsEachAccumulatorInItsDialectAndBindsConstantsBeforeTheWhere) {
  auto cls = DealSchema();
  cls.fields.emplace_back("closed", schema::FieldDef{schema::FieldType::kDate, {}});
  cls.fields.emplace_back("won", schema::FieldDef{schema::FieldType::kBoolean, {}});
  schema::AggregatePlan plan;
  plan.query.where = schema::FieldEquals("amount", Cell(std::int64_t{5}));
  plan.key_column = "won";
  plan.accumulators = {{schema::AccumulatorOp::kSum, "", 2}, {schema::AccumulatorOp::kSum, "amount", 1},
                       {schema::AccumulatorOp::kMax, "closed", 1}, {schema::AccumulatorOp::kAvg, "won", 1}};
  const auto lite = sql::AggregateRows(LiteSql(), cls, plan);
  EXPECT_EQ(lite.sql,
            "SELECT t0.\"won\", COUNT(*) * ?, TOTAL(t0.\"amount\"), MAX(t0.\"closed\"), AVG(t0.\"won\") "
            "FROM \"Deal\" AS t0 WHERE t0.\"amount\" = ? GROUP BY 1");
  EXPECT_EQ(lite.params, (std::vector<Cell>{Cell(2.0), Cell(std::int64_t{5})}));
  const auto pg = sql::AggregateRows(PgSql(), cls, plan);
  EXPECT_TRUE(pg.sql.starts_with("SELECT t0.\"won\"::int, COUNT(*) * $1::float8, COALESCE(SUM(t0.\"amount\")::float8, 0), "
                                 "to_char(MAX(t0.\"closed\"), 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'), "
                                 "AVG(t0.\"won\"::int)::float8 FROM \"app_one\".\"Deal\" AS t0 WHERE "))
      << pg.sql;
  EXPECT_EQ(DollarNumbers(pg.sql), PlaceholdersUpTo(2)) << pg.sql;
  EXPECT_EQ(pg.params, lite.params);
  plan.distinct = true;
  plan.key_column = "closed";
  EXPECT_TRUE(sql::AggregateRows(PgSql(), cls, plan)
                  .sql.ends_with(") AND t0.\"closed\" IS NOT NULL"));
}

TEST(SqlStatementsTest, EveryStatementNumbersItsPlaceholdersInTextOrder) {
  const auto cls = DealSchema();
  for (const std::string& text :
       {sql::GetById(PgSql(), sql::SelectRows(PgSql(), "Deal")), sql::RowExists(PgSql(), "Deal"), sql::DeleteRow(PgSql(), "Deal"),
        sql::FindReference(PgSql(), "Deal", "owner"), sql::UnlinkOwner(PgSql(), "Deal", "owners"), sql::CountRows(PgSql(), "Deal"),
        sql::AddOutbox(PgSql()), sql::GetOutbox(PgSql()), sql::SetOutbox(PgSql()), sql::RemoveOutbox(PgSql()),
        sql::ReadOutbox(PgSql()), sql::SaveClass(PgSql()), sql::DropClass(PgSql()), sql::LoadClasses(PgSql())}) {
    const auto numbers = DollarNumbers(text);
    EXPECT_EQ(numbers, PlaceholdersUpTo(static_cast<int>(numbers.size()))) << text;
  }
}

}  // namespace
}  // namespace crmd::storage

namespace crmd::storage {
namespace {

// The shared statements run on each store, bound as each store binds them: an update's id bound
// last, an UpdateWhere's values before its where, the ACL lists and explicit nulls in the store's
// own form, read back by Get and by the ACL filter.
class SharedStatementsStoreTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    db_ = test::OpenTestStore(GetParam(), dir_);
    cls_.name = "Deals";
    cls_.fields = {{"title", {schema::FieldType::kString, {}}},
                   {"owners", {schema::FieldType::kRelation, "Deals"}},
                   {"amount", {schema::FieldType::kNumber, {}}}};
    auto txn = db_->BeginWrite(/*exclusive=*/true);
    txn->SaveClass(nullptr, cls_);
    for (const char* id : {"d1", "d2", "d3"}) {
      Row row;
      row.object_id = id;
      row.created_at = row.updated_at = "2026-01-01T00:00:00.000Z";
      row.cells = {std::string("deal ") + id, std::int64_t{5}};
      txn->Insert(cls_, {"title", "amount"}, row);
    }
    txn->Commit();
  }

  std::int64_t CountReadableBy(std::vector<std::string> principals) {
    schema::Query q;
    q.readable_by = std::move(principals);
    return db_->Count(cls_, q);
  }

  test::TempDir dir_{"shared-statements"};
  std::unique_ptr<Database> db_;
  schema::ClassSchema cls_;
};

TEST_P(SharedStatementsStoreTest, AnUpdateWritesTheRowsOwnColumnsAndFieldsOfThatRowOnly) {
  {
    auto txn = db_->BeginWrite();
    Row row;
    row.object_id = "d2";
    row.updated_at = "2026-02-02T00:00:00.000Z";
    row.acl = R"({"u1":{"read":true,"write":true}})";
    row.nulls = {"title"};
    row.cells = {std::monostate{}, std::int64_t{9}};
    txn->Update(cls_, {"title", "amount"}, row);
    txn->Commit();
  }
  const auto d2 = db_->Get(cls_, "d2");
  ASSERT_TRUE(d2.has_value());
  EXPECT_EQ(d2->created_at, "2026-01-01T00:00:00.000Z");
  EXPECT_EQ(d2->updated_at, "2026-02-02T00:00:00.000Z");
  EXPECT_EQ(d2->nulls, std::vector<std::string>{"title"});
  EXPECT_EQ(d2->cells, (std::vector<Cell>{std::monostate{}, std::int64_t{9}}));
  EXPECT_EQ(db_->Get(cls_, "d1")->cells, (std::vector<Cell>{std::string("deal d1"), std::int64_t{5}}));
  EXPECT_EQ(CountReadableBy({"u2"}), 2);
  EXPECT_EQ(CountReadableBy({"u1"}), 3);
}

TEST_P(SharedStatementsStoreTest, UpdateWhereAndSetAclWhereChangeTheRowsTheirWhereKeeps) {
  {
    auto txn = db_->BeginWrite();
    schema::Expr d1_or_d3;
    d1_or_d3.kind = schema::ExprKind::kOr;
    d1_or_d3.children = {schema::FieldEquals("objectId", std::string("d1")),
                         schema::FieldEquals("objectId", std::string("d3"))};
    EXPECT_EQ(txn->UpdateWhere(cls_, d1_or_d3, {"amount", "title"}, {std::int64_t{1}, std::string("kept")}), 2);
    EXPECT_EQ(txn->SetAclWhere(cls_, schema::FieldEquals("amount", std::int64_t{1}),
                               std::string(R"({"u1":{"read":true}})")),
              2);
    EXPECT_EQ(txn->UpdateWhere(cls_, schema::FieldEquals("title", std::string("nothing")), {"amount"}, {std::int64_t{2}}), 0);
    txn->Commit();
  }
  EXPECT_EQ(db_->Get(cls_, "d3")->cells, (std::vector<Cell>{std::string("kept"), std::int64_t{1}}));
  EXPECT_EQ(db_->Get(cls_, "d2")->cells, (std::vector<Cell>{std::string("deal d2"), std::int64_t{5}}));
  const auto d1_acl = db_->Get(cls_, "d1")->acl;
  ASSERT_TRUE(d1_acl.has_value());
  EXPECT_EQ(boost::json::parse(*d1_acl), boost::json::parse(R"({"u1":{"read":true}})"));  // jsonb respaces it
  EXPECT_EQ(CountReadableBy({"u2"}), 1);
  EXPECT_EQ(CountReadableBy({"u1"}), 3);
}

TEST_P(SharedStatementsStoreTest, RowsAreFoundDeletedAndUnlinkedByTheirIds) {
  {
    auto txn = db_->BeginWrite();
    txn->ChangeRelation(cls_, "owners", "d1", {"d2", "d3"}, /*add=*/true);
    txn->ChangeRelation(cls_, "owners", "d2", {"d3"}, /*add=*/true);
    EXPECT_TRUE(txn->Exists(cls_, "d1"));
    EXPECT_FALSE(txn->Exists(cls_, "d9"));
    txn->Commit();
  }
  auto owners = db_->RelationOwners(cls_, "owners", {"d3", "d9"});
  std::sort(owners.begin(), owners.end());
  EXPECT_EQ(owners, (std::vector<std::string>{"d1", "d2"}));
  EXPECT_EQ(db_->GetMany(cls_, {"d3", "d9", "d1"}).rows.size(), 2u);
  {
    auto txn = db_->BeginWrite();
    EXPECT_TRUE(txn->Delete(cls_, "d1"));
    EXPECT_FALSE(txn->Delete(cls_, "d1"));
    EXPECT_EQ(txn->Count(cls_), 2);
    txn->Commit();
  }
  EXPECT_EQ(db_->RelationOwners(cls_, "owners", {"d3"}), std::vector<std::string>{"d2"});
}

TEST_P(SharedStatementsStoreTest, AnOutboxEntryIsChangedAndRemovedByItsId) {
  std::int64_t first = 0, second = 0;
  {
    auto txn = db_->BeginWrite();
    first = txn->outbox().AddOutbox(1, "one");
    second = txn->outbox().AddOutbox(2, "two");
    txn->outbox().SetOutbox(first, "one again");
    txn->Commit();
  }
  auto entries = db_->ReadOutbox(0, 10);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].payload, "one again");
  EXPECT_EQ(entries[1].lane, 2);
  EXPECT_EQ(db_->ReadOutbox(first, 10).size(), 1u);
  {
    auto txn = db_->BeginWrite();
    txn->outbox().RemoveOutbox(second);
    EXPECT_FALSE(txn->outbox().GetOutbox(second).has_value());
    EXPECT_EQ(txn->outbox().GetOutbox(first)->payload, "one again");
    txn->Commit();
  }
}

INSTANTIATE_TEST_SUITE_P(Stores, SharedStatementsStoreTest, test::AllStores(), test::StoreName);

}  // namespace
}  // namespace crmd::storage
