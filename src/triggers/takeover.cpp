#include "triggers/takeover.hpp"

#include <algorithm>

#include "util/log.hpp"

namespace crmd::triggers {

namespace {

// A beat at a quarter of the lease: three may fail (a slow database, a reconnect) before the
// others find this process dead.
constexpr int kBeatsPerLease = 4;
// Scans at a tenth of the lease, so that a short lease (a test's) is still watched closely.
constexpr int kScansPerLease = 10;
// The shortest time between two scans, whatever the lease.
constexpr std::chrono::milliseconds kMinScanInterval{100};

}  // namespace

Takeover::Takeover(storage::OutboxTakeover& shared, std::chrono::seconds lease, Found found)
    : shared_(shared),
      lease_(lease),
      beat_every_(std::chrono::duration_cast<std::chrono::milliseconds>(lease) / kBeatsPerLease),
      scan_every_(std::clamp(std::chrono::duration_cast<std::chrono::milliseconds>(lease) / kScansPerLease, kMinScanInterval,
                             kMaxScanInterval)),
      found_(std::move(found)) {}

Takeover::~Takeover() { Stop(); }

void Takeover::Start() {
  try {
    Beat();
    shared_.Orphans(std::nullopt, 0);  // who is dead, for the claims of the recovery at start
  } catch (const std::exception& e) {
    log::Warn("keeping this server alive in the database failed", {{"error", e.what()}});
  }
  thread_ = std::thread([this] { Loop(); });
}

void Takeover::Stop() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_ && !thread_.joinable()) return;
    stopping_ = true;
  }
  changed_.notify_all();
  if (!thread_.joinable()) return;
  thread_.join();
  try {
    shared_.Retire();
  } catch (const std::exception& e) {
    // The others find it dead when its last beat's lease ends instead.
    log::Warn("retiring this server in the database failed", {{"error", e.what()}});
  }
}

void Takeover::Beat() {
  shared_.KeepAlive(lease_);
  last_beat_ = Clock::now();
}

void Takeover::Loop() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    lock.unlock();
    bool more = false;
    try {
      if (Clock::now() - last_beat_ >= beat_every_) Beat();
      more = Scan();
      failing_ = false;
    } catch (const std::exception& e) {
      // Once per outage (the database away): each scan would say it again.
      if (!failing_) log::Warn("taking over trigger activations failed", {{"error", e.what()}});
      failing_ = true;
    }
    lock.lock();
    if (!more) changed_.wait_for(lock, scan_every_, [&] { return stopping_; });
  }
}

bool Takeover::Scan() {
  const auto holders = shared_.Orphans(cursor_, kHoldersPerScan);
  std::size_t looks = 0;
  for (const auto& holder : holders) {
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return false;
    }
    Seen& seen = seen_[holder];
    const auto now = Clock::now();
    if (seen.not_before <= now) {
      if (looks == kLooksPerScan) return true;  // this one first at the next scan, at once
      ++looks;
      storage::OrphanedEntries found;
      try {
        found = shared_.Look(holder, seen.after, kEntriesPerLook);
      } catch (const std::exception& e) {
        // This outbox again after a lease; the others meanwhile, so that one cannot stop them all.
        log::Warn("reading a stopped server's trigger activations failed",
                  {{"app", holder.app_id}, {"server", holder.process}, {"error", e.what()}});
        seen = Seen{now + lease_, 0};
        cursor_ = holder;
        listed_.insert(holder);
        continue;
      }
      if (!found.due.empty())
        log::Info("taking over trigger activations of a stopped server",
                  {{"app", holder.app_id}, {"server", holder.process}, {"activations", static_cast<std::int64_t>(found.due.size())}});
      const bool full = found.due.size() >= kEntriesPerLook;
      for (auto& entry : found.due) {
        seen.after = entry.id;
        found_(holder.app_id, std::move(entry));
      }
      if (found.cleared) {
        seen_.erase(holder);
      } else if (!full) {
        seen.after = 0;
        // Again when the next of its leases ends; otherwise once what was handed over has had
        // time to be claimed (the holder, holding nothing, is then forgotten).
        seen.not_before = now + (found.next ? std::max(*found.next, std::chrono::milliseconds(0))
                                            : std::chrono::milliseconds(lease_));
      }
    }
    cursor_ = holder;
    listed_.insert(holder);
  }
  if (holders.size() < kHoldersPerScan) {
    // The end of a round: what was not listed in it was forgotten by another server.
    std::erase_if(seen_, [&](const auto& kv) { return !listed_.contains(kv.first); });
    listed_.clear();
    cursor_ = std::nullopt;
  }
  return looks == kLooksPerScan || std::any_of(seen_.begin(), seen_.end(), [](const auto& kv) { return kv.second.after > 0; });
}

}  // namespace crmd::triggers
