// The outbox of trigger activations as a write transaction sees it (WriteTransaction::outbox()):
// an activation is added in the transaction of the write that fired it, changed and removed in
// those of its actions, so that what committed and what is left to do never disagree.
//
// Not thread-safe: it belongs to its transaction. Changing or removing an entry that is gone is
// not an error.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace crmd::storage {

// A stored trigger activation waiting for its actions (triggers/activation.hpp). `payload` is the
// triggers layer's text; storage never reads it.
struct OutboxEntry {
  std::int64_t id = 0;  // increasing, never reused
  int lane = 0;         // which of the trigger runner's queues runs it
  std::string payload;
};

class OutboxWrites {
 public:
  virtual ~OutboxWrites() = default;
  virtual std::int64_t AddOutbox(int lane, std::string_view payload) = 0;
  virtual std::optional<OutboxEntry> GetOutbox(std::int64_t id) = 0;
  virtual void SetOutbox(std::int64_t id, std::string_view payload) = 0;
  virtual void RemoveOutbox(std::int64_t id) = 0;
};

}  // namespace crmd::storage
