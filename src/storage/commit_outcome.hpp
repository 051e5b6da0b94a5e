// How a commit ended, as the writes it held are answered. A client retries a 503 (spec: a condition
// of the moment), so only a commit known not to have happened may be answered so: a retry of a write
// that did commit would make it twice.
#pragma once

namespace crmd::storage {

enum class CommitOutcome {
  kDurable,      // committed and on disk
  kUnavailable,  // not committed: the store could not be reached (503; a retry is safe)
  kFailed,       // not committed: the store refused it (500)
  // The connection dropped while the COMMIT was under way and the store could not tell, within
  // its bound, whether it happened (500: it may have).
  kUnknown,
};

inline bool Durable(CommitOutcome outcome) { return outcome == CommitOutcome::kDurable; }

// The worse of two outcomes of one job's commits: any loss outweighs durability, and an unknown
// outcome outweighs a known one (it must never be answered as retryable).
inline CommitOutcome Worse(CommitOutcome a, CommitOutcome b) { return a > b ? a : b; }

}  // namespace crmd::storage
