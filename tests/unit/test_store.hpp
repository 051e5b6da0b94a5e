// The stores a unit test of storage runs on (issue 22: one suite, two stores): "sqlite", a file in
// the test's temporary directory, or "postgresql", a new database of a throw-away PostgreSQL 15
// cluster: the test run's (tests/support/pg-fixture), or one the test binary starts on first use
// and stops at exit.
#pragma once

#include <cstdlib>
#include <memory>
#include <string>

#include "pg_cluster.hpp"
#include "storage/database.hpp"
#include "storage/sqlite/sqlite_store.hpp"
#include "storage/stores.hpp"
#include "temp_dir.hpp"

namespace crmd::test {

// Every store a storage test runs on, for INSTANTIATE_TEST_SUITE_P.
inline auto AllStores() { return ::testing::Values(std::string("sqlite"), std::string("postgresql")); }

// The run's cluster when ctest started one (the `pg` fixture: CRMD_TEST_PG_DIR), else one of
// this process, stopped by its destructor at exit.
inline PgCluster& SharedPgCluster() {
  static PgCluster cluster = [] {
    if (const char* dir = std::getenv("CRMD_TEST_PG_DIR"); dir && *dir) return PgCluster(std::string(dir));
    return PgCluster();
  }();
  return cluster;
}

inline std::unique_ptr<storage::Database> OpenTestStore(const std::string& kind, const TempDir& dir, int readers = 2,
                                                        storage::Durability durability = storage::Durability::kNormal) {
  if (kind == "sqlite") return storage::OpenSqlite(dir.File("data.db"), durability, readers);
  return storage::PostgresStores(SharedPgCluster().NewDatabase(), 8)->Open("test");
}

// For INSTANTIATE_TEST_SUITE_P: the store's name as the test's suffix.
inline std::string StoreName(const ::testing::TestParamInfo<std::string>& info) { return info.param; }

}  // namespace crmd::test
