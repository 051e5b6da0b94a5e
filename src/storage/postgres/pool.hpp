// The one connection pool of a server on PostgreSQL (issue 22): every application's store borrows
// from it, so thousands of tenants do not mean thousands of connections. Statements name their
// application's schema, so a connection serves any application without a SET per request.
// A connection that broke (the server restarted) or was returned inside a transaction is closed,
// not lent again: the next request connects anew, which is how crmd recovers from a restart of
// PostgreSQL without one of its own. Thread-safe.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "storage/postgres/connection.hpp"

namespace crmd::storage::postgres {

class Pool {
 public:
  // At most `max_connections` open at once; a borrower waits for one (StorageError after a while).
  // `process`: this server's name among those on the database (random when empty).
  Pool(std::string conninfo, std::size_t max_connections, std::string process = {});
  ~Pool();
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  struct Return {
    Pool* pool;
    void operator()(Connection* c) const { pool->Release(c); }
  };
  using Lease = std::unique_ptr<Connection, Return>;

  // A connection. A read's statements are bounded by this thread's ReadDeadline when it has one
  // (statement_timeout); a write's are not (its own limits bound it).
  Lease Acquire(bool read = true);

  const std::string& conninfo() const { return conninfo_; }
  // Closes the idle connections (the process is short of descriptors).
  void DropIdle();
  // Names this process (this pool) among the servers on the database: who claimed an outbox entry.
  const std::string& process() const { return process_; }

 private:
  void Release(Connection* c);
  // Sets /metrics' gauges of the connections lent and the callers waiting (mutex_ held): as they
  // change, under the lock the change takes anyway. A server has one pool; a second (tests) would
  // share the gauges.
  void Measure() const;

  std::string conninfo_;
  std::string process_;
  std::size_t max_;
  std::mutex mutex_;
  std::condition_variable freed_;
  std::size_t open_ = 0;
  std::size_t waiting_ = 0;  // callers in Acquire waiting for a connection
  std::vector<std::unique_ptr<Connection>> idle_;
  std::set<Connection*> reading_;  // lent for a read: cancelled when the server ends all reads
  int end_all_hook_ = 0;
};

}  // namespace crmd::storage::postgres
