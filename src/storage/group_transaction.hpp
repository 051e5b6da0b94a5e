// The store's half of a write group (write_group.hpp): one transaction that the grouped writes
// begun through it share, each as a member that commits only into it, from the first such write to
// Commit(). Each store (sqlite/, postgres/) implements it; the rest of the write group (which job
// wrote into which commit, what waits for a commit, when to flush) is storage::WriteGroup's,
// written once for both.
//
// Not thread-safe: used by the one thread that runs the group. While the transaction is open it
// holds the store, so other threads' writes wait for Commit(). The destructor commits what is
// still open.
#pragma once

#include <memory>

#include "storage/commit_outcome.hpp"
#include "storage/write_transaction.hpp"

namespace crmd::storage {

class GroupTransaction {
 public:
  virtual ~GroupTransaction() = default;

  // Grouped (exclusive = false): a member of the open transaction, which it opens if none is; its
  // Commit() returns at once and its work is durable at the next Commit() of this object.
  // Exclusive: a transaction of its own that runs alone, as RecordStore::BeginWrite(true) begins;
  // called with no transaction open here, or it would wait for this very object.
  virtual std::unique_ptr<WriteTransaction> BeginWrite(bool exclusive) = 0;
  // Commits the open transaction, if any, and lets go of the store. Anything but kDurable (logged
  // here) is every member's outcome: their work is lost, or not known to be kept. Nothing open is
  // durable. Never throws.
  virtual CommitOutcome Commit() = 0;
  // Whether an error made the store roll the open transaction back: a member begun now would
  // commit on its own, outside the group, and then be reported lost with it.
  virtual bool Lost() const = 0;
  // Whether a writer of another thread waits for an exclusive turn, which it gets at the next
  // Commit().
  virtual bool ExclusiveWaiting() const = 0;
};

}  // namespace crmd::storage
