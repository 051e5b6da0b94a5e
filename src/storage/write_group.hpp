// A write group (an application's write queue, a batch): writes that share one transaction and
// one durable COMMIT (one fsync) instead of each making its own.
//
// The writes begun through a group share its open transaction, each in its own savepoint, and are
// made durable together by Flush() instead of each by its own Commit() (which returns at once). An
// exclusive write begun through it is never nested: the group is flushed first and the write then
// runs alone as usual, so a schema change is still published only after its own commit. Writes
// begun since the last flush belong to the flush Epoch() names; Failed(epoch) tells whether its
// COMMIT failed, in which case they were all lost. The destructor flushes.
//
// Not thread-safe: a group is used by one thread at a time. It holds the store from its first
// write to its flush, so groups and the writes of other threads take turns.
#pragma once

#include <cstdint>
#include <memory>

#include "storage/write_transaction.hpp"

namespace crmd::storage {

class WriteGroup {
 public:
  virtual ~WriteGroup() = default;
  virtual std::unique_ptr<WriteTransaction> BeginWrite(bool exclusive) = 0;
  virtual std::uint64_t Epoch() const = 0;
  virtual void Flush() = 0;  // never throws: a failure is what Failed() reports
  virtual bool Failed(std::uint64_t epoch) const = 0;
  // Flushes (and so fails) the open group if an error made the store roll all of it back;
  // otherwise does nothing. Called between writes, so that no write is counted in a lost group.
  virtual void FlushIfLost() = 0;
  // Whether a writer of another thread waits for an exclusive turn, which it gets at the next
  // Flush: for tests, which must not guess it from a sleep.
  virtual bool ExclusiveWaiting() const = 0;
};

// What begins write groups: the record store (RecordStore), and all an application's write queue
// needs of it.
class WriteGroups {
 public:
  virtual ~WriteGroups() = default;
  virtual std::unique_ptr<WriteGroup> BeginWriteGroup() = 0;
};

}  // namespace crmd::storage
