// What became of a transaction whose COMMIT was sent when the connection dropped: the server may
// have committed it before going away, or not. A write answered 503 is retried by its client, so
// it must be known not to have committed; PostgreSQL keeps every transaction's fate in its commit
// log (pg_xact), which `txid_status` reads, across a crash and restart of the server.
#pragma once

#include <chrono>
#include <cstdint>

#include "storage/postgres/pool.hpp"

namespace crmd::storage::postgres {

// How long a writer asks again while the server is away (its restart takes seconds): the
// application's writes wait that long at most, which they would anyway with the server down.
inline constexpr std::chrono::seconds kResolveFor{30};

// Whether transaction `xid` committed: asks the server on a new lease from `pool`, again and again
// until it answers or `bound` has passed; waits while the transaction is still in progress (its
// backend has not yet noticed that the client is gone). Throws CommitOutcomeUnknown past `bound`.
bool Committed(Pool& pool, std::int64_t xid, std::chrono::milliseconds bound = kResolveFor);

}  // namespace crmd::storage::postgres
