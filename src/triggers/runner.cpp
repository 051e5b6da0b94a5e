#include "triggers/runner.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "app/write_unit.hpp"
#include "logs/trigger_log.hpp"
#include "metrics/metrics.hpp"
#include "storage/outbox.hpp"
#include "triggers/activation.hpp"
#include "triggers/definition.hpp"
#include "triggers/placeholders.hpp"
#include "util/json.hpp"
#include "util/log.hpp"
#include "util/time.hpp"

namespace crmd::triggers {

namespace json = boost::json;

namespace {

// The longest wait between two retries of one action, however many came before.
constexpr std::chrono::milliseconds kMaxRetryDelay{10 * 60 * 1000};
// Outbox entries read at once when recovering a store's activations.
constexpr std::size_t kRecoverPage = 1000;


using RunResult = Runner::RunResult;

RunResult FromAnswer(std::pair<int, std::string> answer) {
  if (answer.first < 300) return {std::move(answer.second), std::nullopt};
  return {"{}", std::move(answer.second)};
}

std::string ErrorText(std::string_view message) { return ToJson(json::object{{"error", message}}); }

const json::object& DataOf(const json::object& action) {
  const auto& wrapper = action.at("actionData").as_object();
  return wrapper.at(action.at("actionType").as_string()).as_object();
}

std::string Text(const json::object& data, std::string_view key, const json::object& record,
                 Escape escape = Escape::kNone) {
  const auto* v = data.if_contains(key);
  return v && v->is_string() ? Fill(v->get_string(), record, escape) : std::string();
}

bool TalksToNetwork(ActionType type) { return type == ActionType::kWebhook || type == ActionType::kSendEmail; }

}  // namespace

Runner::Runner(Host host, Options options) : host_(std::move(host)), options_(std::move(options)) {
  for (int i = 0; i < std::max(1, options_.threads); ++i) threads_.emplace_back([this] { Loop(kLaneNow); });
  threads_.emplace_back([this] { Loop(kLaneQueue); });
}

Runner::~Runner() { Stop(); }

void Runner::Stop() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_ && threads_.empty()) return;
    stopping_ = true;
  }
  for (auto& lane : changed_) lane.notify_all();
  for (auto& t : threads_)
    if (t.joinable()) t.join();
  threads_.clear();
  if (recovering_.joinable()) recovering_.join();
  // Last: what is left is the others' once this server is retired.
  if (takeover_) takeover_->Stop();
}

void Runner::TakeOver(storage::OutboxTakeover& shared) {
  takeover_ = std::make_unique<Takeover>(shared, options_.lease, [this](const std::string& app_id, storage::OutboxEntry entry) {
    Activated(app_id, entry.id, entry.lane, std::move(entry.payload));
  });
  takeover_->Start();
}

void Runner::Activated(const std::string& app_id, std::int64_t entry, int lane, std::string payload) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;  // it stays in the outbox for the next start
    if (known_.contains({app_id, entry})) return;
    if (known_.size() >= options_.max_held) {
      overflow_.insert(app_id);  // it stays in the outbox until there is room
      ++overflowed_;
      return;
    }
    known_.emplace(std::pair(app_id, entry), Clock::now());
    if (known_.size() > options_.payloads_held) payload.clear();  // read from the outbox when it runs
    const int queue = lane == kLaneQueue ? kLaneQueue : kLaneNow;
    ready_[queue].Push(Job{app_id, entry, lane, 0, std::move(payload)});
    // Under the lock: once Stop() has taken it, no caller is still touching the condition, which
    // the runner's destruction then ends (TSan saw a notify racing the destructor). Every thread
    // of the lane: one of them may be in its test hold, where a wake-up would be lost.
    changed_[queue].notify_all();
  }
}

std::size_t Runner::held() {
  std::lock_guard lock(mutex_);
  return known_.size();
}

std::size_t Runner::overflowed() {
  std::lock_guard lock(mutex_);
  return overflowed_;
}

void Runner::Rescan(const std::string& app_id) {
  auto app = host_.open(app_id);
  if (!app) return;
  std::size_t found = 0;
  for (std::int64_t after = 0;;) {
    // Less what another server holds: it runs that, or whoever takes over from it.
    auto entries = app->trigger_outbox().ReadClaimable(after, kRecoverPage);
    for (auto& e : entries) Activated(app_id, e.id, e.lane, std::move(e.payload));
    found += entries.size();
    {
      std::lock_guard lock(mutex_);
      if (stopping_ || known_.size() >= options_.max_held) break;
    }
    if (entries.size() < kRecoverPage) break;
    after = entries.back().id;
  }
  if (found) log::Info("trigger activations read from the outbox", {{"app", app_id}, {"activations", static_cast<std::int64_t>(found)}});
}

void Runner::Recover(std::vector<std::string> app_ids) {
  recovering_ = std::thread([this, ids = std::move(app_ids)] {
    for (const auto& id : ids) {
      {
        std::lock_guard lock(mutex_);
        if (stopping_) return;
      }
      try {
        if (host_.has_pending && host_.has_pending(id)) Rescan(id);
      } catch (const std::exception& e) {
        log::Error("recovering trigger activations failed", {{"app", id}, {"error", e.what()}});
      }
    }
  });
}

// What one action's unit needs, from its runner thread to wherever the unit runs.
struct Runner::Step {
  Job job;
  auth::Context ctx;
  Activation activation;
  const json::object* action = nullptr;  // in `activation`; null: unreadable
  std::optional<ActionType> type;
  RunResult sent;  // what a network action did
  bool last = false;
  bool ok = false;  // the unit committed (in the queue: once its group's flush says so)
  std::string next_payload;  // the entry as the unit left it, when actions remain
};

std::chrono::milliseconds Runner::RetryDelay(int attempts) const {
  const int shift = std::clamp(attempts - 1, 0, 20);
  return std::chrono::milliseconds(std::min<std::int64_t>(kMaxRetryDelay.count(), options_.retry_delay.count() << shift));
}

void Runner::Later(Job job, std::optional<std::chrono::milliseconds> after) {
  const auto delay = after ? *after : RetryDelay(job.attempts);
  std::lock_guard lock(mutex_);
  if (stopping_) return;  // it stays in the outbox for the next start
  waiting_.emplace(Clock::now() + delay, std::move(job));
  for (auto& lane : changed_) lane.notify_all();  // each thread's next wake-up may be sooner now
}

void Runner::Again(Job job) {
  std::lock_guard lock(mutex_);
  if (stopping_) return;
  const int queue = job.lane == kLaneQueue ? kLaneQueue : kLaneNow;
  ready_[queue].Push(std::move(job));
  changed_[queue].notify_all();
}

void Runner::Finished(const Job& job) {
  std::lock_guard lock(mutex_);
  known_.erase({job.app_id, job.entry});
  // Room again for what overflowed: only the now lane's threads read it back from its outbox, and
  // a job of the queue lane finishing wakes none of them otherwise.
  if (!overflow_.empty() && known_.size() <= options_.max_held / 2) changed_[kLaneNow].notify_all();
}

void Runner::Loop(int lane) {
  std::unique_lock lock(mutex_);
  for (;;) {
    // Retries that are due join their queue.
    const auto now = Clock::now();
    for (auto it = waiting_.begin(); it != waiting_.end() && it->first <= now;) {
      ready_[it->second.lane == kLaneQueue ? kLaneQueue : kLaneNow].Push(std::move(it->second));
      it = waiting_.erase(it);
    }
    if (stopping_) return;
    std::optional<Job> next = ready_[lane].Take();
    if (!next) {
      // Room again: what overflowed is read back from its outbox.
      if (lane == kLaneNow && !overflow_.empty() && known_.size() <= options_.max_held / 2) {
        const std::string app_id = std::move(*overflow_.begin());
        overflow_.erase(overflow_.begin());
        lock.unlock();
        try {
          Rescan(app_id);
        } catch (const std::exception& e) {
          log::Error("reading trigger activations failed", {{"app", app_id}, {"error", e.what()}});
        }
        lock.lock();
        continue;
      }
      if (waiting_.empty()) {
        changed_[lane].wait(lock);
      } else {
        // A copy: another thread may take the entry (and free its key) while this one waits.
        const Clock::time_point due = waiting_.begin()->first;
        changed_[lane].wait_until(lock, due);
      }
      continue;
    }
    Job job = std::move(*next);
    lock.unlock();
    if (options_.hold.count() > 0) {
      std::unique_lock hold(mutex_);
      changed_[lane].wait_for(hold, options_.hold, [&] { return stopping_; });
    }
    Outcome outcome = Outcome::kFinished;
    try {
      outcome = Run(job);
    } catch (const std::exception& e) {
      // A fault of the store (or a bug): the activation stays, and is tried again later.
      log::Error("trigger activation failed", {{"app", job.app_id}, {"entry", job.entry}, {"error", e.what()}});
      ++job.attempts;
      job.payload.clear();  // read again: what is stored decides
      outcome = Outcome::kRetry;
    }
    if (outcome == Outcome::kRetry) Later(job);
    else if (outcome == Outcome::kBusy) Later(job, kBusyDelay);
    else if (outcome == Outcome::kFinished) Finished(job);
    lock.lock();
    // No one to wake: this thread takes the application's next job itself, if it has one.
    ready_[lane].Done(job.app_id);
  }
}

Runner::Outcome Runner::Run(Job& job) {
  auto app = host_.open(job.app_id);
  if (!app) return Outcome::kFinished;
  for (;;) {
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return Outcome::kQueued;  // the rest stays in the outbox
    }
    const Outcome outcome = Next(job, app);
    if (outcome != Outcome::kNext) return outcome;
    job.attempts = 0;
  }
}

Runner::Outcome Runner::Next(Job& job, const std::shared_ptr<app::Application>& app) {
  // Taken again at each action and attempt: the lease then runs from the last thing this server did
  // with it, should it die. Held by another server (it won a race to take over the entry): that
  // one runs it, and should it die too, the entry comes back through the takeover.
  switch (app->trigger_outbox().ClaimOutbox(job.entry, options_.lease)) {
    case storage::Outbox::Claim::kGone:
    case storage::Outbox::Claim::kHeld: return Outcome::kFinished;
    case storage::Outbox::Claim::kTaken: break;
  }
  if (job.payload.empty()) {
    auto stored = app->trigger_outbox().ReadOutbox(job.entry - 1, 1);
    if (stored.empty() || stored.front().id != job.entry) return Outcome::kFinished;  // ran already
    job.payload = std::move(stored.front().payload);
  }
  auto parsed = Activation::Parse(job.payload);
  if (!parsed.ok()) {
    log::Error("unreadable trigger activation left in the outbox", {{"app", job.app_id}, {"entry", job.entry}});
    return Outcome::kFinished;
  }
  auto step = std::make_shared<Step>();
  step->job = job;
  step->activation = std::move(parsed).value();
  const Activation& activation = step->activation;
  step->last = activation.done + 1 >= activation.actions.size();
  auth::Context& ctx = step->ctx;
  ctx.app = app;
  ctx.identity = auth::Identity::System();
  ctx.credentials = host_.credentials ? host_.credentials(job.app_id) : nullptr;
  ctx.trigger_level = activation.step;
  ctx.trigger_id = activation.trigger_id;
  ctx.source_trigger = activation.source;
  ctx.trigger_root = activation.root;
  if (activation.done < activation.actions.size()) {
    if (const auto* a = activation.actions[activation.done].if_object()) {
      const auto* type = a->if_contains("actionType");
      const auto* id = a->if_contains("_id");
      if (type && type->is_string() && id && id->is_string()) {
        step->type = ParseActionType(type->get_string());
        if (step->type) step->action = a;
      }
    }
  }

  // Network actions first, outside any unit: no store waits for a receiver.
  if (step->action && TalksToNetwork(*step->type)) {
    bool retry = false;
    step->sent = Send(*step, *app, retry);
    const auto kind = *step->type == ActionType::kSendEmail ? metrics::NetworkKind::kMail : metrics::NetworkKind::kWebhook;
    if (step->sent.error && retry && job.attempts < options_.retries) {
      metrics::CountNetworkAction(kind, metrics::NetworkAction::kRetried);
      ++job.attempts;
      log::Warn("trigger action failed; retrying",
                {{"app", job.app_id}, {"trigger", activation.trigger_id}, {"action", std::string(step->action->at("_id").as_string())},
                 {"attempt", job.attempts}, {"error", *step->sent.error}});
      return Outcome::kRetry;
    }
    metrics::CountNetworkAction(kind, step->sent.error ? metrics::NetworkAction::kFailed : metrics::NetworkAction::kDelivered);
  }

  if (step->action && *step->type == ActionType::kServerSideCode) {
    // Here, not on the write queue: a function may run its whole budget, and the application's
    // other writes must not wait for it. Within the application's share of function threads.
    std::optional<app::FunctionPool::Slot> slot;
    if (host_.function_slot) {
      slot = host_.function_slot(job.app_id);
      if (!slot) return Outcome::kBusy;
    }
    auto status = app::RunWrite(ctx, [&](app::WriteUnit& unit) { return RunUnit(unit, *step); });
    if (!status.ok()) throw std::runtime_error("trigger action unit failed: " + status.error().message);
    job.payload = std::move(step->next_payload);
    return step->last ? Outcome::kFinished : Outcome::kNext;
  }

  // On the write queue: committed with the application's other writes, one flush for many.
  app->writes().Submit(
      {[this, step](storage::WriteGroup& group) {
         step->ctx.queued = &group;
         try {
           auto status = app::RunWrite(step->ctx, [&](app::WriteUnit& unit) { return RunUnit(unit, *step); });
           step->ok = status.ok();
           if (!status.ok()) log::Error("trigger action unit failed", {{"error", status.error().message}});
         } catch (const std::exception& e) {
           log::Error("trigger action unit failed", {{"app", step->job.app_id}, {"error", e.what()}});
         }
         step->ctx.queued = nullptr;
       },
       [this, step](storage::CommitOutcome outcome) {
         Job next = step->job;
         // Not known durable: run again. The step's unit re-reads the outbox entry it advanced, so a
         // commit that did happen after all is not applied twice.
         if (!storage::Durable(outcome) || !step->ok) {
           ++next.attempts;
           next.payload.clear();  // read again: what is stored decides
           Later(std::move(next));
         } else if (step->last) {
           Finished(next);
         } else {
           next.attempts = 0;
           next.payload = std::move(step->next_payload);
           Again(std::move(next));
         }
       }});
  return Outcome::kQueued;
}

RunResult Runner::Send(const Step& step, app::Application& app, bool& retry) const {
  const Activation& activation = step.activation;
  const json::object& data = DataOf(*step.action);
  if (*step.type == ActionType::kSendEmail) {
    // A record's values go into the mail as text, never as markup or headers (issue 31 #11).
    mail::Mail mail{Text(data, "to", activation.record, Escape::kHeader),
                    Text(data, "subject", activation.record, Escape::kHeader),
                    Text(data, "html", activation.record, Escape::kHtml), true};
    std::string error;
    retry = !app.mailer().Deliver(mail, error);
    return retry ? RunResult{"{}", ErrorText(error)} : RunResult{ToJson(json::object{{"to", mail.to}}), std::nullopt};
  }
  Webhook hook;
  hook.url = Text(data, "url", activation.record);
  if (const auto* headers = data.if_contains("headers"); headers && headers->is_object())
    for (const auto& kv : headers->get_object())
      if (kv.value().is_string()) hook.headers.emplace_back(kv.key(), Fill(kv.value().get_string(), activation.record));
  hook.body = ToJson(activation.record);
  hook.secret = step.ctx.credentials ? step.ctx.credentials->webhook_secret : std::string();
  hook.event = activation.event;
  hook.class_name = activation.class_name;
  hook.trigger_id = activation.trigger_id;
  // The same on every retry of this action: receivers drop duplicates by it.
  hook.delivery_id = fmt::format("{}-{}-{}", step.job.app_id, step.job.entry, step.action->at("_id").as_string());
  const Delivery delivery = PostWebhook(hook, options_.webhook);
  retry = delivery.retry;
  if (delivery.delivered) return {ToJson(json::object{{"status", delivery.status}}), std::nullopt};
  return {"{}", ToJson(json::object{{"status", delivery.status}, {"error", delivery.error}})};
}

Status Runner::RunUnit(app::WriteUnit& unit, Step& step) {
  const Activation& activation = step.activation;
  auth::Context& ctx = step.ctx;
  // The entry as this step read it, or the action ran meanwhile (an earlier run of the job that a
  // crash or a failed flush cut short): then it is not run again.
  auto current = unit.txn().outbox().GetOutbox(step.job.entry);
  if (!current || current->payload != step.job.payload) return {};
  RunResult result;
  std::string action_id;
  if (!step.action) {
    result.error = ErrorText("unreadable trigger action");
  } else {
    action_id = std::string(step.action->at("_id").as_string());
    const json::object& data = DataOf(*step.action);
    const json::object& record = activation.record;
    switch (*step.type) {
      case ActionType::kWebhook:
      case ActionType::kSendEmail: result = step.sent; break;
      case ActionType::kCreateRecord: {
        // The table is the definition's own (checked when it was set), never a placeholder.
        const std::string table(data.at("table").as_string());
        const json::value body = FillAll(data.at("data"), record);
        result = FromAnswer(host_.dispatch(ctx, "POST", "/classes/" + table, &body));
        break;
      }
      case ActionType::kUpdateRecord: {
        const json::value body = FillAll(data.at("data"), record);
        result = FromAnswer(
            host_.dispatch(ctx, "PUT", "/classes/" + activation.class_name + "/" + activation.object_id, &body));
        break;
      }
      case ActionType::kNotification: {
        json::object body{
            {"User", json::object{{"__type", "Pointer"}, {"className", "_User"}, {"objectId", Text(data, "user", record)}}},
            {"Content", Text(data, "content", record)},
            {"Date", json::object{{"__type", "Date"}, {"iso", timeutil::NowIso()}}},
            {"objectClass", activation.class_name},
            {"objectIdValue", activation.object_id},
            {"updatedByTrigger", activation.trigger_id}};
        if (data.contains("icon")) body["Icon"] = Text(data, "icon", record);
        const json::value value(std::move(body));
        result = FromAnswer(host_.dispatch(ctx, "POST", "/classes/_Notification", &value));
        break;
      }
      case ActionType::kServerSideCode: {
        const std::string name(data.at("functionName").as_string());
        auth::Context fn_ctx = ctx;  // joins this unit
        const json::object body{{"triggerId", activation.trigger_id},
                                {"event", activation.event},
                                {"className", activation.class_name},
                                {"objectId", activation.object_id}};
        auto answer = host_.run_function ? host_.run_function(fn_ctx, name, body, json::value(record))
                                         : Result<json::value>(ApiError{400, 0, "User function not found"});
        if (answer.ok()) result = {ToJson(answer.value()), std::nullopt};
        else result = {"{}", ToJson(json::object{{"error", answer.error().message}})};
        break;
      }
    }
  }
  if (unit.restarting()) return app::WriteUnit::Restarting();
  CRMD_TRY(logs::RecordTriggerRun(unit, {activation.trigger_id, action_id.empty() ? std::nullopt : std::optional(action_id),
                                         activation.event, activation.object_id, result.data, result.error}));
  if (step.last) {
    unit.txn().outbox().RemoveOutbox(step.job.entry);
  } else {
    Activation next = activation;
    ++next.done;
    step.next_payload = next.Serialize();
    unit.txn().outbox().SetOutbox(step.job.entry, step.next_payload);
  }
  return {};
}

std::size_t Runner::Held() {
  std::lock_guard lock(mutex_);
  return known_.size();
}

std::chrono::steady_clock::duration Runner::OldestHeld() {
  std::lock_guard lock(mutex_);
  if (known_.empty()) return Clock::duration::zero();
  Clock::time_point oldest = Clock::time_point::max();
  for (const auto& [activation, since] : known_) oldest = std::min(oldest, since);
  return Clock::now() - oldest;
}

}  // namespace crmd::triggers
