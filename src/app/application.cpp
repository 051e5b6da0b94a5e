#include "app/application.hpp"

#include <filesystem>
#include <stdexcept>
#include <vector>

#include "metrics/metrics.hpp"
#include "schema/system_classes.hpp"
#include "storage/read_deadline.hpp"
#include "util/log.hpp"

namespace crmd::app {

namespace {
// The applications a process about to exit let go of (Applications::StopForExit): kept until the
// exit, and reachable, so that a leak checker counts them as kept rather than lost.
std::vector<std::shared_ptr<Application>>& LeftToExit() {
  static auto* left = new std::vector<std::shared_ptr<Application>>;
  return *left;
}

schema::Snapshot::ClassMap LoadClasses(storage::RecordStore& db) {
  schema::Snapshot::ClassMap classes;
  for (auto& cls : db.LoadSchema()) {
    std::string name = cls->name;
    classes[name] = std::move(cls);
  }
  return classes;
}
}  // namespace

Application::Application(std::string id, std::unique_ptr<storage::Database> db, std::string dir,
                         const Settings& settings, mail::Mailer* smtp, AfterCommitRunner* after_commit)
    : id_(std::move(id)),
      db_(std::move(db)),
      dir_(std::move(dir)),
      settings_(settings),
      smtp_(smtp),
      outbox_((std::filesystem::path(dir_) / "outbox").string()),
      own_after_commit_(after_commit ? nullptr : std::make_unique<AfterCommitRunner>()),
      after_commit_(after_commit ? after_commit : own_after_commit_.get()) {
  schema::Snapshot::ClassMap classes = LoadClasses(*db_);
  // System classes exist from the first open (a store created before them gets them now).
  std::vector<schema::ClassSchema> missing;
  for (auto& cls : schema::SystemClasses())
    if (!classes.contains(cls.name)) missing.push_back(std::move(cls));
  if (!missing.empty()) {
    auto txn = db_->BeginWrite(/*exclusive=*/true);
    for (auto& cls : missing) {
      txn->SaveClass(nullptr, cls);
      std::string name = cls.name;
      classes[name] = std::make_shared<const schema::ClassSchema>(std::move(cls));
    }
    txn->Commit();
  }
  schema_ = std::make_shared<const schema::Snapshot>(std::move(classes));
}

std::shared_ptr<const schema::Snapshot> Application::schema() const {
  std::lock_guard lock(mutex_);
  return schema_;
}

void Application::Publish(std::shared_ptr<const schema::Snapshot> next) {
  std::lock_guard lock(mutex_);
  schema_ = std::move(next);
}

void Application::ReloadSchema() {
  auto turn = db_->BeginWrite(/*exclusive=*/true);
  db_->ForgetLayout();
  Publish(std::make_shared<const schema::Snapshot>(LoadClasses(*db_)));
}

std::string Application::system_user_id() const {
  std::lock_guard lock(mutex_);
  return system_user_id_;
}

void Application::SetSystemUserId(std::string id) {
  std::lock_guard lock(mutex_);
  system_user_id_ = std::move(id);
}

WriteQueue& Application::writes() {
  std::lock_guard lock(mutex_);
  if (!writes_) {
    writes_ = std::make_unique<WriteQueue>(*db_);
    if (writes_stopped_) writes_->Stop();  // no thread yet: later writes are refused
  }
  return *writes_;
}

void Application::StopWrites() {
  WriteQueue* queue = nullptr;
  {
    std::lock_guard lock(mutex_);
    writes_stopped_ = true;
    queue = writes_.get();
  }
  // Outside the lock: the queue's last jobs may still read the schema.
  if (queue) queue->Stop();
}

void Application::RequestStopWrites() {
  std::lock_guard lock(mutex_);
  writes_stopped_ = true;
  if (writes_) writes_->RequestStop();
}

std::size_t Application::queued_writes() const {
  std::lock_guard lock(mutex_);
  return writes_ ? writes_->depth() : 0;
}

std::uint64_t Application::Generation(std::string_view class_name) const {
  std::lock_guard lock(mutex_);
  auto it = generations_.find(class_name);
  return it == generations_.end() ? 0 : it->second;
}

void Application::Wrote(const std::set<std::string, std::less<>>& classes) {
  std::lock_guard lock(mutex_);
  for (const auto& name : classes) ++generations_[name];
}

std::string Application::phone_region() const {
  std::lock_guard lock(mutex_);
  return phone_region_;
}

bool Application::SetPhoneRegion(std::string region) {
  std::lock_guard lock(mutex_);
  if (region == phone_region_) return false;
  phone_region_ = std::move(region);
  return true;
}

bool Application::PhoneIndexCheckedFor(const std::shared_ptr<const schema::Snapshot>& snapshot) const {
  std::lock_guard lock(mutex_);
  return phone_index_checked_ == snapshot;
}

void Application::SetPhoneIndexCheckedFor(std::shared_ptr<const schema::Snapshot> snapshot) {
  std::lock_guard lock(mutex_);
  phone_index_checked_ = std::move(snapshot);
}

std::optional<bool> Application::CachedFlag(std::string_view flag, std::uint64_t generation) const {
  std::lock_guard lock(mutex_);
  auto it = flags_.find(flag);
  if (it == flags_.end() || it->second.generation != generation) return std::nullopt;
  return it->second.on;
}

void Application::CacheFlag(std::string_view flag, std::uint64_t generation, bool on) {
  std::lock_guard lock(mutex_);
  auto it = flags_.find(flag);
  if (it == flags_.end()) flags_.emplace(std::string(flag), Flag{generation, on});
  else it->second = Flag{generation, on};
}

Applications::Applications(std::string data_dir, StoreOptions options, Settings settings, Preparer prepare)
    : data_dir_(std::move(data_dir)),
      options_(options),
      stores_(options_.url.empty() ? storage::SqliteStores(data_dir_, options_.durability, options_.readers)
                                   : storage::PostgresStores(options_.url, options_.connections, options_.instance)),
      settings_(std::move(settings)),
      prepare_(std::move(prepare)) {
  if (options_.max_open == 0) throw std::invalid_argument("at least one application must be open at a time");
  if (!settings_.smtp_url.empty())
    smtp_ = std::make_unique<mail::SmtpMailer>(settings_.smtp_url, settings_.mail_from);
  closer_ = std::thread([this] { CloserLoop(); });
  stores_->Watch([this](const std::string& app_id) { SchemaChanged(app_id); });
}

void Applications::SchemaChanged(const std::string& app_id) {
  std::vector<std::shared_ptr<Application>> apps;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [id, slot] : open_)
      if (slot.app && (app_id == "*" || id == app_id)) apps.push_back(slot.app);
  }
  for (const auto& app : apps) {
    try {
      app->ReloadSchema();
    } catch (const std::exception& e) {
      log::Error("reloading a schema failed", {{"app", app->id()}, {"error", e.what()}});
    }
  }
}

Applications::~Applications() {
  stores_->StopWatching();  // its thread reloads open applications
  try {
    StopWrites();
  } catch (const std::exception& e) {
    log::Error("stopping the applications failed", {{"error", e.what()}});
  }
}

std::shared_ptr<Application> Applications::Open(const std::string& app_id) {
  if (!IsValidAppId(app_id)) throw std::invalid_argument("invalid application id");
  std::unique_lock lock(mutex_);
  for (;;) {
    auto it = open_.find(app_id);
    if (it != open_.end() && it->second.app) {
      recent_.splice(recent_.begin(), recent_, it->second.recent);
      return it->second.app;
    }
    if (it == open_.end()) break;
    changed_.wait(lock);  // another caller opens it
  }
  recent_.push_front(app_id);
  open_.emplace(app_id, Slot{nullptr, recent_.begin()});
  lock.unlock();

  std::shared_ptr<Application> app;
  try {
    try {
      app = OpenStore(app_id);
    } catch (const storage::OutOfDescriptors&) {
      if (Relieve() == 0) throw;
      app = OpenStore(app_id);
    }
  } catch (...) {
    lock.lock();
    auto it = open_.find(app_id);
    recent_.erase(it->second.recent);
    open_.erase(it);
    changed_.notify_all();
    throw;
  }
  lock.lock();
  open_.find(app_id)->second.app = app;
  auto idle = TakeIdle(options_.max_open);
  metrics::CountStoreEvictions(metrics::Eviction::kCacheFull, idle.size());
  for (auto& one : idle) to_close_.push_back(std::move(one));
  changed_.notify_all();
  return app;
}

std::size_t Applications::Relieve() {
  std::vector<std::shared_ptr<Application>> idle;
  {
    std::lock_guard lock(mutex_);
    idle = TakeIdle(open_.size() > kFreeWhenShort ? open_.size() - kFreeWhenShort : 0);
    metrics::CountStoreEvictions(metrics::Eviction::kDescriptors, idle.size());
    if (on_short_) on_short_();
  }
  stores_->Relieve();
  const std::size_t closed = idle.size();
  Close(std::move(idle));
  return closed;
}

void Applications::OnShortOfDescriptors(std::function<void()> let_go) {
  std::lock_guard lock(mutex_);
  on_short_ = std::move(let_go);
}

std::shared_ptr<Application> Applications::OpenStore(const std::string& app_id) {
  // An open is not the read of the request that asked for it: others wait for it, and its reads
  // (the schema, the system user) must not stop at that request's slice. A cold open that had
  // waited for the CPU past the slice was abandoned there (the store closed on the network thread)
  // and done again on a slow-read thread: twice the work, when the CPU was already short.
  const storage::ReadDeadline unbounded(std::nullopt);
  auto dir = std::filesystem::path(data_dir_) / "apps" / app_id;
  std::filesystem::create_directories(dir);
  auto db = stores_->Open(app_id);
  auto app = std::make_shared<Application>(app_id, std::move(db), dir.string(), settings_, smtp_.get(), &after_commit_);
  app->SetActivations(activations_);
  app->SetChanges(changes_);
  if (region_of_) app->SetPhoneRegion(region_of_(app_id));
  if (prepare_) prepare_(*app);
  return app;
}

std::vector<std::shared_ptr<Application>> Applications::TakeIdle(std::size_t target) {
  std::vector<std::shared_ptr<Application>> taken;
  // From the least recently used end; an application in use (held by anyone but this cache, or
  // still opening) is passed over.
  for (auto it = recent_.end(); open_.size() > target && it != recent_.begin();) {
    --it;
    auto slot = open_.find(*it);
    if (!slot->second.app || slot->second.app.use_count() > 1) continue;
    ++closing_;
    taken.push_back(std::move(slot->second.app));
    open_.erase(slot);
    it = recent_.erase(it);
  }
  return taken;
}

void Applications::Close(std::vector<std::shared_ptr<Application>> apps) {
  for (auto& app : apps) {
    const std::string id = app->id();
    try {
      app->StopWrites();
      {
        std::lock_guard lock(mutex_);
        if (exiting_) LeftToExit().push_back(std::move(app));
      }
      app.reset();  // the store closes here, unless it was left to the exit
    } catch (const std::exception& e) {
      log::Error("closing an application failed", {{"app", id}, {"error", e.what()}});
    }
    std::lock_guard lock(mutex_);
    --closing_;
  }
}

void Applications::CloserLoop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    // Also now and then: an application still in use when a newer one was opened (a queued
    // write, rows of the request log) is closed once its users are done.
    changed_.wait_for(lock, kRecheck, [this] { return stopped_ || !to_close_.empty(); });
    if (stopped_ && to_close_.empty()) return;
    auto idle = TakeIdle(options_.max_open);
    metrics::CountStoreEvictions(metrics::Eviction::kCacheFull, idle.size());
    for (auto& one : idle) to_close_.push_back(std::move(one));
    if (to_close_.empty()) continue;
    std::vector<std::shared_ptr<Application>> batch(std::make_move_iterator(to_close_.begin()),
                                                    std::make_move_iterator(to_close_.end()));
    to_close_.clear();
    lock.unlock();
    Close(std::move(batch));
    lock.lock();
  }
}

void Applications::Forget(const std::string& app_id) {
  std::lock_guard lock(mutex_);
  auto slot = open_.find(app_id);
  if (slot == open_.end() || !slot->second.app) return;  // not open, or its first caller opens it now
  ++closing_;
  to_close_.push_back(std::move(slot->second.app));
  recent_.erase(slot->second.recent);
  open_.erase(slot);
  changed_.notify_all();
}

std::vector<std::shared_ptr<Application>> Applications::OpenApplications() {
  std::lock_guard lock(mutex_);
  std::vector<std::shared_ptr<Application>> apps;
  apps.reserve(open_.size());
  for (auto& [id, slot] : open_)
    if (slot.app) apps.push_back(slot.app);
  return apps;
}

std::size_t Applications::open_count() {
  std::lock_guard lock(mutex_);
  return open_.size() + closing_;
}

std::size_t Applications::queued_writes() {
  std::size_t queued = 0;
  for (const auto& app : OpenApplications()) queued += app->queued_writes();
  return queued;
}

void Applications::StopWrites() {
  {
    std::lock_guard lock(mutex_);
    if (stopped_) return;
    stopped_ = true;
    changed_.notify_all();
  }
  if (closer_.joinable()) closer_.join();  // closes what was taken out before it ends
  const auto apps = OpenApplications();
  // Every queue's thread told first, then each waited for: with a thousand applications written to
  // lately, a stop and join one after another took a thread's wake-up and exit each, in turn.
  for (const auto& app : apps) app->RequestStopWrites();
  for (const auto& app : apps) app->StopWrites();
  after_commit_.Stop();  // runs what the last writes left to do
}

void Applications::StopForExit() {
  {
    std::lock_guard lock(mutex_);
    exiting_ = true;
  }
  StopWrites();
  std::lock_guard lock(mutex_);
  for (auto& [id, slot] : open_)
    if (slot.app) LeftToExit().push_back(std::move(slot.app));
  open_.clear();
  recent_.clear();
}

bool IsValidAppId(std::string_view app_id) {
  if (app_id.empty() || app_id.size() > 64) return false;
  for (char c : app_id) {
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
              c == '-';
    if (!ok) return false;
  }
  return true;
}

}  // namespace crmd::app
