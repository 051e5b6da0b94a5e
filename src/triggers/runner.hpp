// The trigger runner (spec §6.1, DESIGN.md "A write, end to end" step 5): runs the activations
// durable writes left in their applications' outboxes, after those writes committed.
//
//   - Each action is one unit of work: its writes (through the record API's handlers, at the
//     activation's level in the chain), its `_syslogTriggers` row, the `_Timeline` rows they cause
//     and the outbox's note that it ran commit together. An activation therefore runs each action
//     exactly once, across crashes: what committed is never run again, what did not is run after
//     restart (Recover). A webhook or mail in flight at a crash may be sent twice.
//   - `webhook` and `send-email` talk to the network outside any unit, so no store waits for
//     them, and are retried with backoff before their failure is recorded.
//   - Two queues: actions that run as soon as their write is durable (a few threads), and the
//     function queue (`server-side-code` with `useQueue`), one call at a time. Both take the
//     applications in turns, one thread per application at a time (triggers/fair_queue.hpp): a
//     tenant's slow receiver holds one thread, never the others' actions.
//   - Bounded: at most Options::max_held activations are held in memory; the rest wait in their
//     outboxes and are read once there is room.
//   - Several servers on one database (TakeOver): each runs what its own writes left, and takes
//     over what a server that died or stopped left, once that server's claims ran out
//     (triggers/takeover.hpp).
//
// Thread-safe. Stop() leaves what has not run in the outboxes, for the next start or for another
// server.
#pragma once

#include <boost/json.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "app/application.hpp"
#include "app/function_pool.hpp"
#include "auth/context.hpp"
#include "auth/registry.hpp"
#include "storage/outbox_takeover.hpp"
#include "triggers/fair_queue.hpp"
#include "triggers/takeover.hpp"
#include "triggers/webhook.hpp"
#include "util/result.hpp"

namespace crmd::triggers {

class Runner final : public app::ActivationSink {
 public:
  // What the runner reaches above it: the api layer's doors.
  struct Host {
    // The open application, or null when it is no longer known.
    std::function<std::shared_ptr<app::Application>(const std::string& app_id)> open;
    std::function<std::shared_ptr<const auth::AppCredentials>(const std::string& app_id)> credentials;
    // A request of the record API below the prefix, made with `ctx` (joining its unit): status and
    // body as the record API wrote it (an action's log row keeps that text, so it is not parsed).
    std::function<std::pair<int, std::string>(auth::Context& ctx, std::string_view method, const std::string& target,
                                              const boost::json::value* body)>
        dispatch;
    // Runs the deployed function `name` with `body`, the triggering record as its context, in
    // `ctx`'s unit.
    std::function<Result<boost::json::value>(auth::Context& ctx, const std::string& name, const boost::json::object& body,
                                             const boost::json::value& record)>
        run_function;
    // Whether the store of `app_id` holds activations, without opening it for requests (Recover).
    std::function<bool(const std::string& app_id)> has_pending;
    // A slot of the application's share of function threads (app::FunctionPool::TryEnter), held
    // while a `server-side-code` action runs; nullopt when its functions hold them all, and the
    // action waits kBusyDelay. Unset: no share.
    std::function<std::optional<app::FunctionPool::Slot>(const std::string& app_id)> function_slot;
  };

  struct Options {
    int threads = 2;  // of the queue that runs at once; the function queue has one
    int retries = 5;  // of a failed webhook or mail
    std::chrono::milliseconds retry_delay{2000};  // before the first retry; doubles each time
    // Waits this long before each activation: a test seam (CRMD_TRIGGER_HOLD_MS), so that a kill
    // can land between a write and its actions.
    std::chrono::milliseconds hold{0};
    WebhookOptions webhook;
    // A burst of writes to a triggered class queues one job each: bounded, so that a backlog (a
    // receiver that is down) costs the server a few MiB, not its memory. Beyond `max_held` jobs
    // the activations wait in their outboxes; beyond `payloads_held` a job holds no payload.
    std::size_t max_held = 100'000;
    std::size_t payloads_held = 10'000;
    // How long a claim of an outbox entry, and this server's liveness, last without being renewed
    // (`crmd serve --trigger-lease`): what another server waits, after this one died, before it
    // runs this one's pending actions. A claim of a live server is never taken, so the lease need
    // not cover a slow action or a retry's wait.
    std::chrono::seconds lease{60};
  };

  // What an action did: the `data` and `error` of its `_syslogTriggers` row (JSON text).
  struct RunResult {
    std::string data = "{}";
    std::optional<std::string> error;
  };

  Runner(Host host, Options options);
  ~Runner() override;  // Stop()
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  void Activated(const std::string& app_id, std::int64_t entry, int lane, std::string payload) override;
  // In the background: queues the stored activations of those of `app_ids` that have any (what a
  // crash or a stop left).
  void Recover(std::vector<std::string> app_ids);
  // Shares the outboxes with the other servers on the database (a store of several processes):
  // keeps this one alive there and takes over what dead ones left. Before Recover; once.
  void TakeOver(storage::OutboxTakeover& shared);
  void Stop();
  // The activations this server holds now: queued, waiting for a retry or running (the trigger
  // backlog of /metrics). Thread-safe.
  std::size_t Held();
  // How long this server has held the oldest of them (zero when it holds none): a walk over them
  // under the runner's lock, once per scrape (100,000 at most; not measured). Thread-safe.
  std::chrono::steady_clock::duration OldestHeld();

  // For tests and diagnosis: activations held now, and how many were left in an outbox for want
  // of room so far.
  std::size_t held();
  std::size_t overflowed();

 private:
  using Clock = std::chrono::steady_clock;
  struct Job {
    std::string app_id;
    std::int64_t entry = 0;
    int lane = 0;
    int attempts = 0;  // of the action it is at, when that talks to the network
    std::string payload;  // the entry as last committed; empty: read it from the outbox
  };
  enum class Outcome {
    kNext,      // an action ran: on to the next
    kFinished,  // nothing left to run
    kRetry,     // it failed and waits (job.attempts counts)
    kQueued,    // handed to the application's write queue, which hands the job back
    kBusy,      // a function whose application's share of threads is taken: again after kBusyDelay
  };
  // How long a function action waits for its application's share of threads to free a slot:
  // about the time a short call takes, so the wait costs little and the retries stay few.
  static constexpr std::chrono::milliseconds kBusyDelay{50};
  struct Step;

  void Loop(int lane);
  Outcome Run(Job& job);
  // Takes the activation's next action: runs its network part here, then its unit of work here
  // (a function call, which may run its whole budget) or on the write queue (record writes and
  // the rows of network actions, which the queue commits with the application's other writes).
  Outcome Next(Job& job, const std::shared_ptr<app::Application>& app);
  // A webhook or mail action's delivery; `retry`: a failure another attempt may cure.
  RunResult Send(const Step& step, app::Application& app, bool& retry) const;
  Status RunUnit(app::WriteUnit& unit, Step& step);
  // Queues the stored activations of `app_id` that are not queued yet (as many as there is room for).
  void Rescan(const std::string& app_id);
  // Runs `job` again after `after`, or after the retry delay of its attempts.
  void Later(Job job, std::optional<std::chrono::milliseconds> after = std::nullopt);
  void Again(Job job);   // back to its queue, for its next action
  void Finished(const Job& job);
  std::chrono::milliseconds RetryDelay(int attempts) const;

  Host host_;
  Options options_;
  std::mutex mutex_;
  // By lane: an activation wakes the threads of its queue, not every runner thread (a thread of
  // the other queue would find nothing and sleep again). A finished job wakes the now lane when
  // what overflowed can be read back (Finished).
  std::condition_variable changed_[2];
  FairQueue<Job> ready_[2];                         // by lane
  std::multimap<Clock::time_point, Job> waiting_;   // retries, by when they are due
  // Queued, waiting or running, with when this server took each (the outbox records no time of
  // its own): OldestHeld scans them at a scrape, rather than every activation paying for an order.
  std::map<std::pair<std::string, std::int64_t>, Clock::time_point> known_;
  // Applications with activations left in their outboxes when kMaxHeld were held: read again
  // once the queue has room.
  std::set<std::string> overflow_;
  std::size_t overflowed_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
  std::thread recovering_;
  std::unique_ptr<Takeover> takeover_;  // set before Recover, when the stores are shared
};

}  // namespace crmd::triggers
