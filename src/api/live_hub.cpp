#include "api/live_hub.hpp"

#include <boost/json.hpp>

#include <algorithm>

#include "api/live_messages.hpp"
#include "api/router.hpp"
#include "util/errors.hpp"
#include "util/json.hpp"
#include "util/log.hpp"
#include "util/strings.hpp"

namespace crmd::api {

namespace json = boost::json;

namespace {

// Tells the subscriber its read was refused: an `error` with the code and message of the refused
// read's body. The caller then ends the subscription.
void TellRefusal(const LiveSubscription& sub, int status, const std::string& body) {
  int code = errors::kInternal;
  std::string message = "read refused (HTTP " + std::to_string(status) + ")";
  auto parsed = ParseJson(body);
  if (parsed.ok() && parsed.value().is_object()) {
    const auto& o = parsed.value().get_object();
    if (const auto* c = o.if_contains("code"); c && c->is_int64()) code = static_cast<int>(c->get_int64());
    if (const auto* e = o.if_contains("error"); e && e->is_string()) message = std::string(e->get_string());
  }
  sub.peer->Send(live::Error(code, message, false, sub.client(), sub.request_id));
}

// The where of `sub` narrowed to one record.
json::object WhereOf(const LiveSubscription& sub, const std::string& object_id, bool matching) {
  if (!matching) return json::object{{"objectId", object_id}};
  auto parsed = ParseJson(sub.where);
  json::object where = parsed.ok() && parsed.value().is_object() ? parsed.value().get_object() : json::object{};
  if (!where.contains("objectId")) {
    where["objectId"] = object_id;
    return where;
  }
  return json::object{{"$and", json::array{where, json::object{{"objectId", object_id}}}}};
}

}  // namespace

LiveHub::LiveHub(Router& router, auth::Registry& registry, bool shared) : router_(router), registry_(registry), shared_(shared) {
  for (int i = 0; i < kThreads; ++i) threads_.emplace_back([this] { Loop(); });
}

LiveHub::~LiveHub() { Stop(); }

void LiveHub::Stop() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& t : threads_) t.join();
}

bool LiveHub::OptedIn(const std::string& app_id, std::string_view class_name) {
  auto credentials = registry_.Find(app_id);
  return credentials && credentials->gates.LiveClass(class_name);
}

bool LiveHub::Watches(const std::string& app_id, std::string_view class_name) {
  // Subscribers on other servers are not known here: an opted-in class is announced.
  if (shared_) return OptedIn(app_id, class_name);
  std::lock_guard lock(mutex_);
  auto app = subs_.find(app_id);
  return app != subs_.end() && app->second.find(class_name) != app->second.end();
}

void LiveHub::Changed(app::RecordChange change) {
  if (!OptedIn(change.app_id, change.class_name)) return;  // the operator closed it since
  std::vector<std::shared_ptr<LiveSubscription>> subs;
  {
    std::lock_guard lock(mutex_);
    auto app = subs_.find(change.app_id);
    if (app == subs_.end()) return;
    auto cls = app->second.find(change.class_name);
    if (cls == app->second.end()) return;
    subs = cls->second;
  }
  const std::string app_id = change.app_id;
  Post(app_id, [this, subs = std::move(subs), change = std::move(change)] {
    Reads reads;
    for (const auto& sub : subs) Deliver(sub, change, reads);
  });
}

Status LiveHub::Add(std::shared_ptr<LiveSubscription> sub) {
  {
    std::lock_guard lock(mutex_);
    auto& count = count_[sub->app_id];
    if (count >= kMaxSubscriptionsPerApplication)
      return ApiError{400, errors::kOperationForbidden,
                      "Too many LiveQuery subscriptions for this application (" + std::to_string(kMaxSubscriptionsPerApplication) + ")"};
    ++count;
    subs_[sub->app_id][sub->class_name].push_back(sub);
  }
  Post(sub->app_id, [this, sub] { Start(sub); });
  return {};
}

void LiveHub::Remove(const std::shared_ptr<LiveSubscription>& sub) {
  sub->active = false;
  std::lock_guard lock(mutex_);
  auto app = subs_.find(sub->app_id);
  if (app == subs_.end()) return;
  auto cls = app->second.find(sub->class_name);
  if (cls == app->second.end()) return;
  auto& list = cls->second;
  auto at = std::find(list.begin(), list.end(), sub);
  if (at == list.end()) return;
  list.erase(at);
  if (list.empty()) app->second.erase(cls);
  if (app->second.empty()) subs_.erase(app);
  if (auto c = count_.find(sub->app_id); c != count_.end() && --c->second == 0) count_.erase(c);
}

void LiveHub::Post(const std::string& app_id, Task task) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    Pending& pending = pending_[app_id];
    if (pending.tasks.size() >= kMaxPendingPerApplication) {
      log::Warn("LiveQuery events dropped: the application's delivery is behind", {{"app", app_id}});
      return;
    }
    pending.tasks.push_back(std::move(task));
    if (pending.queued) return;
    pending.queued = true;
    ready_.push_back(app_id);
  }
  wake_.notify_one();
}

void LiveHub::Loop() {
  for (;;) {
    std::string app_id;
    std::vector<Task> turn;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !ready_.empty(); });
      if (stopping_) return;
      app_id = std::move(ready_.front());
      ready_.pop_front();
      Pending& pending = pending_[app_id];
      while (!pending.tasks.empty() && turn.size() < kTurn) {
        turn.push_back(std::move(pending.tasks.front()));
        pending.tasks.pop_front();
      }
    }
    for (auto& task : turn) {
      try {
        task();
      } catch (const std::exception& e) {
        log::Error("a LiveQuery delivery failed", {{"app", app_id}, {"error", e.what()}});
      }
    }
    {
      std::lock_guard lock(mutex_);
      Pending& pending = pending_[app_id];
      if (pending.tasks.empty()) {
        pending_.erase(app_id);
      } else {
        ready_.push_back(app_id);  // its next turn, after the others'
        wake_.notify_one();
      }
    }
  }
}

std::pair<int, std::string> LiveHub::Read(const LiveSubscription& sub, const std::string& query) {
  Request request;
  request.method = Method::kGet;
  request.method_name = "GET";
  request.target = "/" + router_.prefix() + "/classes/" + sub.class_name + "?" + query;
  request.headers = sub.headers;
  Response response = router_.Handle(request);
  if (response.run_off_loop) {  // this thread is no network thread: the read may take its time
    request.off_loop = true;
    response = router_.Handle(request);
  }
  return {response.status, std::move(response.body)};
}

const std::pair<int, std::string>& LiveHub::SharedRead(const LiveSubscription& sub, const std::string& query, Reads& reads) {
  std::string key = sub.class_name + '\n' + query;
  for (const auto& [name, value] : sub.headers) key += '\n' + name + ':' + value;
  if (auto at = reads.find(key); at != reads.end()) return at->second;
  return reads.emplace(std::move(key), Read(sub, query)).first->second;
}

bool LiveHub::ReadRecord(const LiveSubscription& sub, const std::string& object_id, bool matching, Reads& reads,
                         json::value& out) {
  std::string query = "limit=1&where=" + PercentEncode(json::serialize(WhereOf(sub, object_id, matching)));
  if (!sub.keys.empty()) query += "&keys=" + PercentEncode(sub.keys);
  const auto& [status, body] = SharedRead(sub, query, reads);
  if (status != 200) {
    TellRefusal(sub, status, body);
    return false;
  }
  out = nullptr;
  auto parsed = ParseJson(body);
  if (!parsed.ok() || !parsed.value().is_object()) return true;
  const auto* results = parsed.value().get_object().if_contains("results");
  if (!results || !results->is_array() || results->get_array().empty() || !results->get_array()[0].is_object()) return true;
  json::object object = results->get_array()[0].get_object();
  object["className"] = sub.class_name;
  out = std::move(object);
  return true;
}

void LiveHub::Send(const LiveSubscription& sub, std::string_view op, const json::value* object, const json::value* original) {
  sub.peer->Send(live::Event(op, sub.client(), sub.request_id, object ? *object : json::value(nullptr), original));
}

namespace {

// What the subscriber is told the record was before an update (LiveQuery's `original`): the
// record as its own read shows it now, with the written fields it was shown put back as they
// were. A field its read does not show stays out, whatever it was. Null when the write did not
// say (another server's change too large to carry them).
json::value Original(const json::value& object, const app::RecordChange& change) {
  if (change.before.empty() || !object.is_object()) return nullptr;
  json::object out = object.get_object();
  const json::object& was = change.before;
  for (const auto& f : change.fields)
    if (!was.contains(f)) out.erase(f);  // it had no value then
  for (const auto& kv : was)
    if (out.contains(kv.key())) out[kv.key()] = kv.value();
  return out;
}

// Whether a created record has a value for one of the fields the subscription watches.
bool HasWatched(const json::value& object, const std::vector<std::string>& watch) {
  if (watch.empty()) return true;
  if (!object.is_object()) return false;
  return std::any_of(watch.begin(), watch.end(), [&](const std::string& f) {
    const auto* v = object.get_object().if_contains(f);
    return v && !v->is_null();
  });
}

}  // namespace

void LiveHub::Start(const std::shared_ptr<LiveSubscription>& sub) {
  if (!sub->active) return;
  // The first read decides the subscription: CLP find, the session, the where's validity. It
  // also seeds the records that match now.
  std::string query = "keys=objectId&limit=" + std::to_string(kSeedLimit + 1) + "&where=" + PercentEncode(sub->where);
  auto [status, body] = Read(*sub, query);
  if (status != 200) {
    TellRefusal(*sub, status, body);
    Remove(sub);
    return;
  }
  auto parsed = ParseJson(body);
  if (parsed.ok() && parsed.value().is_object())
    if (const auto* results = parsed.value().get_object().if_contains("results"); results && results->is_array())
      for (const auto& r : results->get_array()) {
        if (sub->matched.size() == kSeedLimit) {
          sub->seed_truncated = true;
          break;
        }
        if (const auto* id = r.is_object() ? r.get_object().if_contains("objectId") : nullptr; id && id->is_string())
          sub->matched.emplace(id->get_string());
      }
  sub->peer->Send(live::Reply("subscribed", sub->client(), sub->request_id));
}

void LiveHub::Deliver(const std::shared_ptr<LiveSubscription>& sub, const app::RecordChange& change, Reads& reads) {
  if (!sub->active) return;
  const std::string& id = change.object_id;
  json::value object;
  switch (change.kind) {
    case app::RecordChange::Kind::kCreate: {
      if (!ReadRecord(*sub, id, true, reads, object)) return Remove(sub);
      if (object.is_null()) return;
      sub->matched.insert(id);
      // With `watch`, a record is told as created only when it has a watched field (Parse).
      if (!HasWatched(object, sub->watch)) return;
      return Send(*sub, "create", &object);
    }
    case app::RecordChange::Kind::kUpdate: {
      if (!ReadRecord(*sub, id, true, reads, object)) return Remove(sub);
      const bool now = !object.is_null();
      const bool was = sub->matched.count(id) > 0 || (sub->seed_truncated && now);
      // `original` only to a subscriber that was told of the record before: on `enter` the
      // previous values may be ones it could not read (the same write may have opened the ACL).
      const bool known = sub->matched.count(id) > 0;
      const json::value original = known ? Original(object, change) : json::value(nullptr);
      const json::value* told_original = original.is_null() ? nullptr : &original;
      if (now && !was) {
        sub->matched.insert(id);
        return Send(*sub, "enter", &object);
      }
      if (!now && was) {
        sub->matched.erase(id);
        // What it may still read of the record (it no longer matches), or its id alone (it may
        // no longer read it: the id is all it knew already).
        json::value readable;
        if (!ReadRecord(*sub, id, false, reads, readable)) return Remove(sub);
        if (readable.is_null()) readable = json::object{{"className", sub->class_name}, {"objectId", id}};
        const json::value readable_original = known ? Original(readable, change) : json::value(nullptr);
        return Send(*sub, "leave", &readable, readable_original.is_null() ? nullptr : &readable_original);
      }
      if (!now) return;
      if (!sub->watch.empty() &&
          std::none_of(change.fields.begin(), change.fields.end(), [&](const std::string& f) {
            return std::find(sub->watch.begin(), sub->watch.end(), f) != sub->watch.end();
          }))
        return;
      sub->matched.insert(id);
      return Send(*sub, "update", &object, told_original);
    }
    case app::RecordChange::Kind::kDelete: {
      if (sub->matched.erase(id) == 0) return;
      // The record is gone: the subscriber's right to read the class is checked now, and it
      // learns nothing but the id it was last told of.
      const auto& [status, body] = SharedRead(*sub, "limit=0", reads);
      if (status != 200) {
        TellRefusal(*sub, status, body);
        return Remove(sub);
      }
      object = json::object{{"className", sub->class_name}, {"objectId", id}};
      return Send(*sub, "delete", &object);
    }
  }
}

}  // namespace crmd::api
