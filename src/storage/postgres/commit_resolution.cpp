#include "storage/postgres/commit_resolution.hpp"

#include <string>
#include <thread>

#include "util/log.hpp"

namespace crmd::storage::postgres {

bool Committed(Pool& pool, std::int64_t xid, std::chrono::milliseconds bound) {
  const auto until = std::chrono::steady_clock::now() + bound;
  std::string last_error = "no answer yet";
  for (;;) {
    try {
      auto c = pool.Acquire(/*read=*/false);
      auto rows = c->Query("SELECT txid_status($1)", {std::to_string(xid)});
      const auto status = rows.Value(0, 0);
      if (status == "committed") return true;
      // NULL: older than the commit log keeps, which a transaction of a moment ago is not.
      if (status == "aborted" || !status) return false;
      last_error = "still in progress";
    } catch (const StoreUnavailable& e) {
      last_error = e.what();  // the server is still away: ask again
    }
    if (std::chrono::steady_clock::now() >= until) {
      log::Error("postgresql: the outcome of a commit is unknown", {{"xid", xid}, {"error", last_error}});
      throw CommitOutcomeUnknown("postgresql: the connection dropped during COMMIT of transaction " +
                                 std::to_string(xid) + " and its outcome is unknown (" + last_error + ")");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

}  // namespace crmd::storage::postgres
