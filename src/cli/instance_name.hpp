// A server's name among the servers on one PostgreSQL database (storage::PostgresStores'
// `instance`): who holds a trigger activation's claim. It must be the same across the server's
// restarts (a server that crashed takes back what it held at once, instead of waiting for its
// claims' lease to end) and distinct between servers running at once (each would take the
// other's claims for its own, and neither would ever find the other dead).
//
// The host, the `--listen` address and the data directory make both, but for servers of one host
// that share them (port 0, the system's pick, as the tests start them): those take slots, the
// lowest free one, held by a lock on a file in `<data>/tmp/` for the life of the process (the
// system lets go of it when the process dies, however it ends). Slot 0 adds nothing to the name.
//
// Not thread-safe: called once, at start.
#pragma once

#include <string>

namespace crmd::cli {

std::string InstanceName(const std::string& listen, const std::string& data_dir);

}  // namespace crmd::cli
