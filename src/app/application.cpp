#include "app/application.hpp"

#include <filesystem>
#include <vector>

#include "schema/system_classes.hpp"
#include <stdexcept>

namespace crmd::app {

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
  schema::Snapshot::ClassMap classes;
  for (auto& cls : db_->LoadSchema()) {
    std::string name = cls.name;
    classes[name] = std::make_shared<const schema::ClassSchema>(std::move(cls));
  }
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

Applications::Applications(std::string data_dir, StoreOptions options, Settings settings, Preparer prepare)
    : data_dir_(std::move(data_dir)), options_(options), settings_(std::move(settings)), prepare_(std::move(prepare)) {
  if (!settings_.smtp_url.empty())
    smtp_ = std::make_unique<mail::SmtpMailer>(settings_.smtp_url, settings_.mail_from);
}

std::shared_ptr<Application> Applications::Open(const std::string& app_id) {
  if (!IsValidAppId(app_id)) throw std::invalid_argument("invalid application id");
  std::lock_guard lock(mutex_);
  auto it = open_.find(app_id);
  if (it != open_.end()) return it->second;
  auto dir = std::filesystem::path(data_dir_) / "apps" / app_id;
  std::filesystem::create_directories(dir);
  auto db = storage::OpenSqlite((dir / "data.db").string(), options_.durability, options_.readers);
  auto app = std::make_shared<Application>(app_id, std::move(db), dir.string(), settings_, smtp_.get(), &after_commit_);
  if (prepare_) prepare_(*app);
  open_.emplace(app_id, app);
  return app;
}

std::vector<std::shared_ptr<Application>> Applications::OpenApplications() {
  std::lock_guard lock(mutex_);
  std::vector<std::shared_ptr<Application>> apps;
  apps.reserve(open_.size());
  for (auto& [id, app] : open_) apps.push_back(app);
  return apps;
}

void Applications::StopWrites() {
  for (auto& app : OpenApplications()) app->StopWrites();
  after_commit_.Stop();  // runs what the last writes left to do
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
