// The LiveQuery subscriptions of this server and the delivery of record changes to them
// (docs/LIVEQUERY.md, issue 36).
//
// A change (app/record_change.hpp) names a record, never its values. For each subscription of its
// class, the hub reads the record again through the router, as the subscriber (its credential
// headers) with the subscription's `where` and `keys`: the read pipeline's Authorize, the record
// ACL, roles, protected fields and projection decide, at send time, what the subscriber learns.
// There is no second permission check here.
//
// Work is kept per application and served in order (subscribe, then the changes committed after
// it, in commit order) by a few delivery threads, an application at a time each, in turns: one
// tenant's burst or slow reads delay its own events, not another's.
//
// Thread-safe. Bounded: subscriptions per application, pending work per application (past it,
// changes are dropped and counted in the log).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "api/live_subscription.hpp"
#include "app/record_change.hpp"
#include "auth/registry.hpp"
#include "util/result.hpp"

namespace crmd::api {

class Router;

class LiveHub final : public app::ChangeSink {
 public:
  // Subscriptions one application may hold on one server: 10,000 idle subscribers cost ~N MiB
  // (docs/LIVEQUERY.md); twice that leaves a large tenant room and keeps one from taking the
  // server's memory.
  static constexpr std::size_t kMaxSubscriptionsPerApplication = 20'000;
  // Changes and subscribes waiting for one application's delivery: a burst of writes beyond this
  // while its subscribers' reads lag loses events rather than the server's memory.
  static constexpr std::size_t kMaxPendingPerApplication = 100'000;
  // Records remembered as matching when a subscription starts (one read): enough for a screen's
  // list; beyond, an update of a record not remembered is told as `update` if it matches.
  static constexpr std::size_t kSeedLimit = 1'000;
  // Work items one thread serves for an application before it takes the next one's turn.
  static constexpr std::size_t kTurn = 64;
  // Delivery threads: reads are short; two keep one slow application from stalling the rest.
  static constexpr int kThreads = 2;

  // `shared`: other servers write to the same database (their writes announce changes whether
  // or not this server has subscribers).
  LiveHub(Router& router, auth::Registry& registry, bool shared);
  ~LiveHub();  // Stop()
  LiveHub(const LiveHub&) = delete;
  LiveHub& operator=(const LiveHub&) = delete;

  // app::ChangeSink.
  bool Watches(const std::string& app_id, std::string_view class_name) override;
  void Changed(app::RecordChange change) override;

  // Whether the application opted `class_name` in (`crmd app set --live-classes`).
  bool OptedIn(const std::string& app_id, std::string_view class_name);

  // Starts `sub`: 119 past the application's cap. Its `subscribed` (or the refusal of its first
  // read: CLP, session) is sent by the delivery thread, before any event.
  Status Add(std::shared_ptr<LiveSubscription> sub);
  // Ends `sub` (not an error when it is no longer there).
  void Remove(const std::shared_ptr<LiveSubscription>& sub);

  // Ends the delivery threads; later changes are dropped.
  void Stop();

 private:
  using Task = std::function<void()>;
  struct Pending {
    std::deque<Task> tasks;
    bool queued = false;  // in ready_ or being served
  };
  void Post(const std::string& app_id, Task task);
  void Loop();
  void Start(const std::shared_ptr<LiveSubscription>& sub);
  // The reads of one change, by everything that decides their answer (credential headers,
  // where, keys): subscribers asking the same read with the same credentials (a user's tabs, a
  // dashboard's key) share one.
  using Reads = std::map<std::string, std::pair<int, std::string>, std::less<>>;
  void Deliver(const std::shared_ptr<LiveSubscription>& sub, const app::RecordChange& change, Reads& reads);
  // The record `object_id` as the subscriber reads it (with its `where` when `matching`): the
  // object, or null when it cannot read it (or it does not match); false when the read itself
  // was refused (the subscription's right to read the class is gone).
  bool ReadRecord(const LiveSubscription& sub, const std::string& object_id, bool matching, Reads& reads,
                  boost::json::value& out);
  std::pair<int, std::string> Read(const LiveSubscription& sub, const std::string& query);
  const std::pair<int, std::string>& SharedRead(const LiveSubscription& sub, const std::string& query, Reads& reads);
  void Send(const LiveSubscription& sub, std::string_view op, const boost::json::value* object,
            const boost::json::value* original = nullptr);

  Router& router_;
  auth::Registry& registry_;
  const bool shared_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  // By application, then class.
  std::unordered_map<std::string, std::map<std::string, std::vector<std::shared_ptr<LiveSubscription>>, std::less<>>> subs_;
  std::unordered_map<std::string, std::size_t> count_;  // subscriptions per application
  std::unordered_map<std::string, Pending> pending_;
  std::deque<std::string> ready_;  // applications with work, in turn
  std::vector<std::thread> threads_;
};

}  // namespace crmd::api
