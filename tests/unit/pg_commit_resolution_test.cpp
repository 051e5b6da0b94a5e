// storage/postgres/commit_resolution against a real PostgreSQL 15 cluster (tests/support/pg_cluster):
// what a COMMIT whose answer was lost became. An id the server never kept (a crash lost it, and the
// restarted server has not reached it) is "not committed", not an error; a committed id read from
// a restarted server counts only below the first id that server gave out.
#include <gtest/gtest.h>

#include "pg_cluster.hpp"
#include "storage/postgres/commit_resolution.hpp"
#include "storage/postgres/connection.hpp"
#include "storage/storage_error.hpp"

namespace crmd::storage::postgres {
namespace {

TransactionName Begun(Connection& c) {
  auto rows = c.Exec("BEGIN; SELECT txid_current(), pg_postmaster_start_time()::text");
  return {rows.Integer(0, 0), std::string(rows.Value(0, 1).value_or(""))};
}

TEST(PgCommitResolutionTest, CommittedAbortedAndNeverKeptTransactions) {
  test::PgCluster cluster;
  Pool pool(cluster.conninfo(), 2);
  Connection c(cluster.conninfo());
  c.Exec("CREATE TABLE t (n int)");

  const auto committed = Begun(c);
  c.Exec("INSERT INTO t VALUES (1); COMMIT");
  EXPECT_TRUE(Committed(pool, committed));

  const auto aborted = Begun(c);
  c.Exec("INSERT INTO t VALUES (2); ROLLBACK");
  EXPECT_FALSE(Committed(pool, aborted));

  // As after a crash that lost it: an id the server has not given out yet.
  EXPECT_FALSE(Committed(pool, {committed.xid + 1'000'000, committed.server_started}));
}

TEST(PgCommitResolutionTest, ACommittedIdOfARestartedServerCountsOnlyBelowItsFirstId) {
  test::PgCluster cluster;
  Pool pool(cluster.conninfo(), 2);
  Connection c(cluster.conninfo());
  c.Exec("CREATE TABLE t (n int)");
  c.Exec("CHECKPOINT");
  const auto given_again = Begun(c);  // past the last checkpoint's next id
  c.Exec("INSERT INTO t VALUES (1); COMMIT");
  // Named by a server started at another time: the id is past the checkpoint's mark, so as
  // after a crash it would have been given out again.
  EXPECT_FALSE(Committed(pool, {given_again.xid, "another start"}));
  c.Exec("CHECKPOINT");
  EXPECT_TRUE(Committed(pool, {given_again.xid, "another start"}));
  EXPECT_TRUE(Committed(pool, given_again));
}

TEST(PgCommitResolutionTest, TheCheckpointsNextIdIsReadWithItsEpoch) {
  EXPECT_EQ(FullTransactionId("0:724"), 724);
  EXPECT_EQ(FullTransactionId("2:5"), (std::int64_t{2} << 32) | 5);
  EXPECT_THROW(FullTransactionId(""), StorageError);
  EXPECT_THROW(FullTransactionId("724"), StorageError);
  EXPECT_THROW(FullTransactionId("1:"), StorageError);
}

}  // namespace
}  // namespace crmd::storage::postgres
