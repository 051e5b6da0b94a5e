#include "storage/postgres/commit_resolution.hpp"

#include <charconv>
#include <string>
#include <thread>

#include "storage/storage_error.hpp"
#include "util/log.hpp"

namespace crmd::storage::postgres {

namespace {

// An id at or past the next one to give out has no fate to read (txid_status refuses it with an
// error): the server that gave it out crashed before its log kept it, so it never committed.
constexpr const char* kAsk =
    "SELECT CASE WHEN $1::bigint >= txid_snapshot_xmax(txid_current_snapshot()) THEN 'lost'"
    " ELSE txid_status($1) END, pg_postmaster_start_time()::text, (pg_control_checkpoint()).next_xid";

}  // namespace

std::int64_t FullTransactionId(std::string_view epoch_and_xid) {
  const auto colon = epoch_and_xid.find(':');
  std::uint64_t epoch = 0, xid = 0;
  const auto* end = epoch_and_xid.data() + epoch_and_xid.size();
  const bool read = colon != std::string_view::npos &&
                    std::from_chars(epoch_and_xid.data(), epoch_and_xid.data() + colon, epoch).ptr ==
                        epoch_and_xid.data() + colon &&
                    std::from_chars(epoch_and_xid.data() + colon + 1, end, xid).ptr == end && colon > 0 &&
                    colon + 1 < epoch_and_xid.size();
  if (!read) throw StorageError("postgresql: unreadable checkpoint transaction id: " + std::string(epoch_and_xid));
  return static_cast<std::int64_t>((epoch << 32) | xid);
}

bool Committed(Pool& pool, const TransactionName& transaction, std::chrono::milliseconds bound) {
  const auto until = std::chrono::steady_clock::now() + bound;
  std::string last_error = "no answer yet";
  for (;;) {
    try {
      auto c = pool.Acquire(/*read=*/false);
      auto rows = c->Query(kAsk, {std::to_string(transaction.xid)});
      const auto status = rows.Value(0, 0);
      if (status == "lost") return false;
      // NULL: older than the commit log keeps, which a transaction of a moment ago is not.
      if (status == "aborted" || !status) return false;
      if (status == "committed") {
        const bool restarted = rows.Value(0, 1).value_or("") != transaction.server_started;
        // After a crash, an id past the last one the log kept was given out again.
        return !restarted || transaction.xid < FullTransactionId(rows.Value(0, 2).value_or(""));
      }
      last_error = "still in progress";
    } catch (const StoreUnavailable& e) {
      last_error = e.what();  // the server is still away: ask again
    }
    if (std::chrono::steady_clock::now() >= until) {
      log::Error("postgresql: the outcome of a commit is unknown", {{"xid", transaction.xid}, {"error", last_error}});
      throw CommitOutcomeUnknown("postgresql: the connection dropped during COMMIT of transaction " +
                                 std::to_string(transaction.xid) + " and its outcome is unknown (" + last_error + ")");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

}  // namespace crmd::storage::postgres
