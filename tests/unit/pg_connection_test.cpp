// storage/postgres/connection (issue 22) against a real, throw-away PostgreSQL 15 cluster
// (tests/support/pg_cluster): parameters as text with NULLs and non-Latin text, statements
// prepared once and reused, errors mapped to the store's (a unique violation is DuplicateKeyError),
// and a failed statement inside a savepoint leaves its transaction usable.
#include <gtest/gtest.h>

#include "pg_cluster.hpp"
#include "storage/postgres/connection.hpp"

namespace crmd::storage::postgres {
namespace {

TEST(PgConnectionTest, ParametersResultsAndErrors) {
  test::PgCluster cluster;
  Connection c(cluster.conninfo());
  c.Exec("CREATE SCHEMA app1; CREATE TABLE app1.t (id text PRIMARY KEY, name text, n bigint)");
  const std::string insert = "INSERT INTO app1.t (id, name, n) VALUES ($1, $2, $3)";
  EXPECT_EQ(c.Query(insert, {"a", "שלום 'quoted' \"x\"", "7"}).Affected(), 1);
  EXPECT_EQ(c.Query(insert, {"b", std::nullopt, std::nullopt}).Affected(), 1);
  auto rows = c.Query("SELECT id, name, n FROM app1.t ORDER BY id");
  ASSERT_EQ(rows.size(), 2);
  ASSERT_EQ(rows.columns(), 3);
  EXPECT_EQ(rows.Value(0, 1), std::optional<std::string_view>("שלום 'quoted' \"x\""));
  EXPECT_EQ(rows.Value(0, 2), std::optional<std::string_view>("7"));
  EXPECT_FALSE(rows.Value(1, 1).has_value());
  EXPECT_THROW(c.Query(insert, {"a", "again", "1"}), DuplicateKeyError);
  try {
    c.Query("SELECT nope FROM app1.t");
    FAIL() << "a bad column is an error";
  } catch (const DuplicateKeyError&) {
    FAIL() << "not a duplicate";
  } catch (const StorageError& e) {
    EXPECT_NE(std::string(e.what()).find("column \"nope\" does not exist"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(c.Healthy());
}

// The store's writes rely on it: a duplicate id fails alone, the transaction goes on (in
// PostgreSQL only behind a savepoint, which the store opens around such a statement).
TEST(PgConnectionTest, AStatementFailingInsideASavepointLeavesTheTransactionUsable) {
  test::PgCluster cluster;
  Connection c(cluster.conninfo());
  c.Exec("CREATE TABLE t (id text PRIMARY KEY)");
  const std::string insert = "INSERT INTO t (id) VALUES ($1)";
  c.Exec("BEGIN");
  c.Query(insert, {"a"});
  c.Exec("SAVEPOINT one");
  EXPECT_THROW(c.Query(insert, {"a"}), DuplicateKeyError);
  c.Exec("ROLLBACK TO SAVEPOINT one");
  c.Query(insert, {"b"});  // the prepared statement is reused after the failure
  c.Exec("COMMIT");
  EXPECT_EQ(c.Query("SELECT count(*) FROM t").Value(0, 0), std::optional<std::string_view>("2"));
}

TEST(PgConnectionTest, AnUnreachableServerIsAStorageError) {
  EXPECT_THROW(Connection("host=/nonexistent-crmd-socket-dir port=5432 user=postgres connect_timeout=2"), StorageError);
}

}  // namespace
}  // namespace crmd::storage::postgres
