#include "storage/postgres/pool.hpp"

#include <chrono>

#include "metrics/metrics.hpp"
#include "util/ids.hpp"

namespace crmd::storage::postgres {

namespace {
// How long a borrower waits for a connection before the request fails (503-like, not a hang).
constexpr auto kWait = std::chrono::seconds(10);
}  // namespace

Pool::Pool(std::string conninfo, std::size_t max_connections, std::string process)
    : conninfo_(std::move(conninfo)),
      process_(process.empty() ? ids::RandomAlnum(16) : std::move(process)),
      max_(std::max<std::size_t>(1, max_connections)) {
  end_all_hook_ = ReadDeadline::AddEndAllHook([this] {
    std::lock_guard lock(mutex_);
    for (Connection* c : reading_) c->Cancel();
  });
}

Pool::~Pool() { ReadDeadline::RemoveEndAllHook(end_all_hook_); }

Pool::Lease Pool::Acquire(bool read) {
  std::unique_ptr<Connection> c;
  {
    std::unique_lock lock(mutex_);
    const auto free = [&] { return !idle_.empty() || open_ < max_; };
    if (!free()) {
      ++waiting_;
      Measure();
      const bool got = freed_.wait_for(lock, kWait, free);
      --waiting_;
      Measure();
      if (!got) throw StorageError("postgresql: all " + std::to_string(max_) + " connections are busy");
    }
    if (!idle_.empty()) {
      c = std::move(idle_.back());
      idle_.pop_back();
    } else {
      ++open_;
    }
    Measure();
  }
  if (!c) {
    try {
      c = std::make_unique<Connection>(conninfo_);
    } catch (...) {
      std::lock_guard lock(mutex_);
      --open_;
      Measure();
      freed_.notify_one();
      throw;
    }
  }
  Lease lease(c.release(), Return{this});
  // A read's statements are bounded by the request's deadline: to the 10 ms below a second (the
  // slice a read may run on a network thread), to the second above (so that the bound, and its
  // SET, changes only when requests' budgets do); at least 1 ms, as 0 would mean none.
  int ms = 0;
  if (const auto remaining = read ? ReadDeadline::Remaining() : std::nullopt) {
    const std::int64_t left = remaining->count();
    const std::int64_t step = left < 1000 ? 10 : 1000;
    ms = static_cast<int>(std::max<std::int64_t>(1, (left + step - 1) / step * step));
  }
  lease->BoundStatements(ms);
  if (read) {
    std::lock_guard lock(mutex_);
    reading_.insert(lease.get());
  }
  return lease;
}

void Pool::Measure() const {
  metrics::Set(metrics::Gauge::kPoolInUse, static_cast<double>(open_ - idle_.size()));
  metrics::Set(metrics::Gauge::kPoolWaiting, static_cast<double>(waiting_));
}

void Pool::DropIdle() {
  std::vector<std::unique_ptr<Connection>> closing;
  {
    std::lock_guard lock(mutex_);
    closing.swap(idle_);
    open_ -= closing.size();
    Measure();
    freed_.notify_all();
  }
}

void Pool::Release(Connection* c) {
  std::unique_ptr<Connection> owned(c);
  const bool reusable = c->Healthy() && !c->InTransaction();
  std::lock_guard lock(mutex_);
  reading_.erase(c);
  if (reusable) idle_.push_back(std::move(owned));
  else --open_;
  Measure();
  freed_.notify_one();
  // `owned` (a broken connection) closes here, under the lock but without waiting on the server.
}

}  // namespace crmd::storage::postgres
