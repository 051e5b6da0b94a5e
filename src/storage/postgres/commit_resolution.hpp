// What became of a transaction whose COMMIT was sent when the connection dropped: the server may
// have committed it before going away, or not. A write answered 503 is retried by its client, so
// it must be known not to have committed; PostgreSQL keeps every transaction's fate in its commit
// log (pg_xact), which `txid_status` reads, across a crash and restart of the server.
//
// A crash makes one more case: the transaction ids handed out after the last one the write-ahead
// log kept are handed out again after the restart, so a `committed` may be another transaction's.
// The restart is told by the server's start time (read with the transaction's id), and the
// first id of the restarted server by the checkpoint that ends crash recovery: an id at or past it
// was lost with the crash. (A later checkpoint would move that mark past ids given out again; the
// answer is asked within seconds of the restart, and checkpoints are minutes apart.)
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "storage/postgres/pool.hpp"

namespace crmd::storage::postgres {

// How long a writer asks again while the server is away (its restart takes seconds): the
// application's writes wait that long at most, which they would anyway with the server down.
inline constexpr std::chrono::seconds kResolveFor{30};

// The transaction to ask about: its id and the start time of the server that gave it out.
struct TransactionName {
  std::int64_t xid = 0;
  std::string server_started;
};

// Whether the transaction committed: asks the server on a new lease from `pool`, again and again
// until it answers or `bound` has passed; waits while the transaction is still in progress (its
// backend has not yet noticed that the client is gone). Throws CommitOutcomeUnknown past `bound`.
bool Committed(Pool& pool, const TransactionName& transaction, std::chrono::milliseconds bound = kResolveFor);

// The first transaction id of a server restarted after a crash, from the checkpoint's `next_xid`
// ("epoch:xid", pg_control_checkpoint). Exposed for its unit test.
std::int64_t FullTransactionId(std::string_view epoch_and_xid);

}  // namespace crmd::storage::postgres
