// The faults a store throws (storage's interfaces return expected outcomes as values). Callers
// that answer requests tell the conditions of the moment (503) from the store's own faults (500).
#pragma once

#include <stdexcept>

namespace crmd::storage {

struct StorageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The process (or system) ran out of file descriptors opening a store or one of its files: a
// condition of the moment, answered 503, not a fault of the store.
struct OutOfDescriptors : StorageError {
  using StorageError::StorageError;
};

// The store's server cannot be reached (PostgreSQL down or restarting): a condition of the moment,
// answered 503; the next request tries again.
struct StoreUnavailable : StorageError {
  using StorageError::StorageError;
};

// The connection to the store's server dropped while a COMMIT was under way, and the server could
// not be asked in time whether it happened: answered 500, never 503 (a retry could make it twice).
struct CommitOutcomeUnknown : StorageError {
  using StorageError::StorageError;
};

// A read that ran past the deadline of its thread's ReadDeadline: stopped, nothing returned.
struct ReadTimedOut : StorageError {
  using StorageError::StorageError;
};

// An insert of an objectId that a row of the class already has. The statement failed alone: the
// transaction goes on.
struct DuplicateKeyError : StorageError {
  using StorageError::StorageError;
};

}  // namespace crmd::storage
