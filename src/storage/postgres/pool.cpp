#include "storage/postgres/pool.hpp"

#include <chrono>

namespace crmd::storage::postgres {

namespace {
// How long a borrower waits for a connection before the request fails (503-like, not a hang).
constexpr auto kWait = std::chrono::seconds(10);
}  // namespace

Pool::Pool(std::string conninfo, std::size_t max_connections)
    : conninfo_(std::move(conninfo)), max_(std::max<std::size_t>(1, max_connections)) {}

Pool::~Pool() = default;

Pool::Lease Pool::Acquire(bool read) {
  std::unique_ptr<Connection> c;
  {
    std::unique_lock lock(mutex_);
    if (!freed_.wait_for(lock, kWait, [&] { return !idle_.empty() || open_ < max_; }))
      throw StorageError("postgresql: all " + std::to_string(max_) + " connections are busy");
    if (!idle_.empty()) {
      c = std::move(idle_.back());
      idle_.pop_back();
    } else {
      ++open_;
    }
  }
  if (!c) {
    try {
      c = std::make_unique<Connection>(conninfo_);
    } catch (...) {
      std::lock_guard lock(mutex_);
      --open_;
      freed_.notify_one();
      throw;
    }
  }
  Lease lease(c.release(), Return{this});
  const auto remaining = read ? ReadDeadline::Remaining() : std::nullopt;
  // Whole seconds, at least one: the bound changes (and costs a SET) only when requests' do.
  int ms = 0;
  if (remaining) ms = static_cast<int>(std::max<std::int64_t>(1, (remaining->count() + 999) / 1000) * 1000);
  lease->BoundStatements(ms);
  return lease;
}

void Pool::Release(Connection* c) {
  std::unique_ptr<Connection> owned(c);
  const bool reusable = c->Healthy() && !c->InTransaction();
  std::lock_guard lock(mutex_);
  if (reusable) idle_.push_back(std::move(owned));
  else --open_;
  freed_.notify_one();
  // `owned` (a broken connection) closes here, under the lock but without waiting on the server.
}

}  // namespace crmd::storage::postgres
