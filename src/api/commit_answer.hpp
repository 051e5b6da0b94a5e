// The answer to a write whose commit did not become durable (storage::CommitOutcome): 503 only when
// the commit is known not to have happened, so that a client's retry cannot make it twice.
#pragma once

#include "storage/commit_outcome.hpp"
#include "util/errors.hpp"

namespace crmd::api {

inline ApiError CommitError(storage::CommitOutcome outcome) {
  if (outcome == storage::CommitOutcome::kUnavailable) return errors::Unavailable("the database is unavailable, try again");
  return errors::Internal();  // logged by the store
}

}  // namespace crmd::api
