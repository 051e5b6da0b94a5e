// One libpq connection of the PostgreSQL store (issue 22): statements with text parameters, each
// SQL text prepared once per connection and executed by name after, and PostgreSQL's errors as the
// store's (a unique violation is DuplicateKeyError; anything else StorageError with the server's
// words; a statement cancelled by its time bound is ReadTimedOut). A connection is used by one thread at a time; the store's pool hands them out.
//
// Values travel as text in both directions (libpq's text format): the store encodes cells itself,
// so that one encoding serves every type, NULL included (nullopt). PostgreSQL's text holds no NUL
// and its jsonb no \u0000, where crmd's values may: every parameter is escaped (EscapeNul) and
// every value read unescaped, so that both arrive, compare and sort as one string.
#pragma once


#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "storage/database.hpp"
#include "storage/postgres/libpq.hpp"

namespace crmd::storage::postgres {

using Params = std::vector<std::optional<std::string>>;

// The rows a statement answered. Values are views into the result: valid while it lives.
// NUL as \x01 '0' and \x01 as \x01 '1'; in JSON text, \u0000 as \u0001 '0' and \u0001 as
// \u0001 '1' (the same string once decoded). Reversed by UnescapeNul.
std::string EscapeNul(std::string_view text);
std::string UnescapeNul(std::string_view text);
bool NeedsEscape(std::string_view text);
bool NeedsUnescape(std::string_view text);

class Rows {
 public:
  explicit Rows(PGresult* result) : result_(result, Pq().PQclear) {}
  int size() const { return Pq().PQntuples(result_.get()); }
  int columns() const { return Pq().PQnfields(result_.get()); }
  // nullopt for SQL NULL.
  std::optional<std::string_view> Value(int row, int column) const;
  // The name of a column of the result.
  std::string_view Name(int column) const;
  // An integer column's value (ids, counts, generations); StorageError when NULL or not one.
  std::int64_t Integer(int row, int column) const;
  // How many rows an INSERT, UPDATE or DELETE touched.
  std::int64_t Affected() const;

 private:
  std::unique_ptr<PGresult, void (*)(PGresult*)> result_;
  mutable std::deque<std::string> unescaped_;  // values that needed UnescapeNul, viewed by Value()
};

class Connection {
 public:
  // `conninfo`: a libpq connection string or URL. Throws StorageError when the server cannot be
  // reached or refuses.
  explicit Connection(const std::string& conninfo);
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Runs `sql` (one or more statements, no parameters): schema changes, BEGIN, COMMIT, SET. Returns
  // the rows of the last statement.
  Rows Exec(std::string_view sql);
  // Runs one statement with `params` ($1, $2, ...), prepared on first use of its text.
  Rows Query(const std::string& sql, const Params& params = {});
  // Sends `sql` (one statement without parameters whose only answer is success or failure: a
  // write's SAVEPOINT) with the next Exec or Query, in the same round trip (libpq's pipeline mode),
  // which throws its failure. Saves a round trip per write of a write group.
  void Defer(std::string sql);
  // Whether the connection still works (a server restart breaks it; the pool then drops it).
  bool Healthy() const;
  // Whether a transaction is open, and whether an error ended what it can do but ROLLBACK.
  bool InTransaction() const;
  bool InFailedTransaction() const;
  // Waits up to `timeout_ms` for notifications of the channels this connection LISTENs to and
  // passes each payload to `received`; returns at once when `wake_fd` (if not -1) turns readable,
  // which the caller drains. Throws StoreUnavailable when the connection broke.
  void AwaitNotifications(int timeout_ms, const std::function<void(std::string_view)>& received, int wake_fd = -1);
  // Asks the server to cancel the statement this connection runs (if any). Safe from another
  // thread while the connection's owner waits for it.
  void Cancel();
  // The time bound of the statements from now on, in milliseconds (0: none). Set only when it
  // changes, so a pool's connections that serve requests with the same bound pay it once.
  void BoundStatements(int milliseconds);

 private:
  Rows Check(PGresult* result, std::string_view sql);
  // Query() with the deferred statements before it, in one pipeline.
  Rows Pipelined(const std::string& name, const std::string& sql, int count, const char* const* values, const int* lengths);
  // The name of `sql`'s statement, prepared now unless it was.
  const std::string& Prepared(const std::string& sql);

  std::unique_ptr<PGconn, void (*)(PGconn*)> conn_;
  std::unique_ptr<PGcancel, void (*)(PGcancel*)> cancel_{nullptr, Pq().PQfreeCancel};
  std::unordered_map<std::string, std::string> prepared_;  // SQL text -> statement name
  std::uint64_t next_statement_ = 0;
  int statement_timeout_ms_ = 0;
  std::vector<std::string> deferred_;
  bool broken_ = false;  // a pipeline failed half-way: never lent again
};

}  // namespace crmd::storage::postgres
