// The trigger runner's watch over the other servers on its database (issue 33): it keeps this
// process alive in the database, and hands the runner the activations of servers that died or
// stopped and stay down, once their claims' leases ran out (storage/outbox_takeover.hpp says how
// they are found).
//
// Timing, for a lease L (`crmd serve --trigger-lease`): this process beats every L/4, so it is
// found dead at most L after it died; its entries' own claims end at most L after it died; each
// scan runs every min(L/10, 2 s). A dead server's pending actions are therefore taken over within
// L plus one scan of its death, then run as this server's own.
//
// Cost, with every server alive: a beat every L/4 and one read of the liveness table per scan,
// whatever the number of applications (0.57 statements a second for the default 60 s lease).
// A scan with orphans is bounded (kHoldersPerScan holders listed, kLooksPerScan outboxes read,
// kEntriesPerLook entries each) and fair: it goes round the orphaned outboxes in order, each
// getting one look per turn, and looks into an outbox again only when its next lease ends.
//
// Thread-safe. Start() once; Stop() (or the destructor) ends the thread and retires this process.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "storage/outbox_takeover.hpp"

namespace crmd::triggers {

class Takeover {
 public:
  // Gets each activation taken over (the runner's Activated); must not block.
  using Found = std::function<void(const std::string& app_id, storage::OutboxEntry entry)>;

  Takeover(storage::OutboxTakeover& shared, std::chrono::seconds lease, Found found);
  ~Takeover();  // Stop()
  Takeover(const Takeover&) = delete;
  Takeover& operator=(const Takeover&) = delete;

  // Beats and learns who is dead before it returns (so that what this process recovers at start
  // goes by it), then watches on a thread of its own. A database that cannot be reached is
  // logged, and tried again at the next beat.
  void Start();
  // Ends the thread; then this process is retired: the others take over what it leaves.
  void Stop();

  // Outboxes of dead processes listed in one scan.
  static constexpr std::size_t kHoldersPerScan = 64;
  // Of those, outboxes read in one scan: with kEntriesPerLook, what one scan may cost.
  static constexpr std::size_t kLooksPerScan = 16;
  // Entries read from one outbox in one look; the rest at the next scan, which then follows at once.
  static constexpr std::size_t kEntriesPerLook = 500;
  // The longest time between two scans, whatever the lease: how late after its lease ran out an
  // entry of a dead process may be taken.
  static constexpr std::chrono::milliseconds kMaxScanInterval{2000};

 private:
  using Clock = std::chrono::steady_clock;
  // What this process knows of an orphaned outbox between scans.
  struct Seen {
    Clock::time_point not_before{};  // when to look into it again
    std::int64_t after = 0;          // the last entry handed over, when a look stopped at its limit
  };

  void Loop();
  void Beat();
  // One scan; true when it stopped at its budget (the next follows at once).
  bool Scan();

  storage::OutboxTakeover& shared_;
  const std::chrono::seconds lease_;
  const std::chrono::milliseconds beat_every_;
  const std::chrono::milliseconds scan_every_;
  Found found_;
  std::mutex mutex_;
  std::condition_variable changed_;
  bool stopping_ = false;  // guarded by mutex_
  std::thread thread_;
  // The scanning thread's own (and Start()'s, before it runs).
  Clock::time_point last_beat_{};
  bool failing_ = false;  // the last beat or scan failed
  std::optional<storage::OutboxHolder> cursor_;  // where the next scan goes on from
  std::map<storage::OutboxHolder, Seen> seen_;
  std::set<storage::OutboxHolder> listed_;  // in this round: what is not is forgotten at its end
};

}  // namespace crmd::triggers
