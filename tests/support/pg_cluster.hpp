// A throw-away PostgreSQL cluster for tests of the PostgreSQL store (issue 22): initdb in a
// temporary directory, a server that listens on a Unix socket in that directory only (no TCP
// port), stopped and removed with the object. As root, the server runs as the `postgres` user
// (PostgreSQL refuses root). The binaries are Debian's postgresql-15 (scripts/install-deps).
#pragma once

#include <string>

namespace crmd::test {

class PgCluster {
 public:
  // Throws std::runtime_error with the tools' output when the cluster cannot start.
  PgCluster();
  // The running cluster of `dir` (tests/support/pg-fixture, started once for a whole test run),
  // which this object neither starts nor stops.
  explicit PgCluster(std::string dir);
  ~PgCluster();
  PgCluster(const PgCluster&) = delete;
  PgCluster& operator=(const PgCluster&) = delete;

  // A libpq connection string for the cluster's `postgres` database as its superuser.
  const std::string& conninfo() const { return conninfo_; }
  // A `postgresql://` URL (crmd's --store) of a new, empty database of the cluster (named after
  // this process too: the processes of a test run share one cluster).
  std::string NewDatabase();

 private:
  std::string dir_;
  std::string conninfo_;
  int databases_ = 0;
  bool owned_ = true;
};

}  // namespace crmd::test
