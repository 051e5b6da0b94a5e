#include "app/application.hpp"

#include <filesystem>
#include <stdexcept>

namespace crmd::app {

Application::Application(std::string id, std::unique_ptr<storage::Database> db)
    : id_(std::move(id)), db_(std::move(db)) {
  schema::Snapshot::ClassMap classes;
  for (auto& cls : db_->LoadSchema()) {
    std::string name = cls.name;
    classes[name] = std::make_shared<const schema::ClassSchema>(std::move(cls));
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

Applications::Applications(std::string data_dir, StoreOptions options)
    : data_dir_(std::move(data_dir)), options_(options) {}

std::shared_ptr<Application> Applications::Open(const std::string& app_id) {
  if (!IsValidAppId(app_id)) throw std::invalid_argument("invalid application id");
  std::lock_guard lock(mutex_);
  auto it = open_.find(app_id);
  if (it != open_.end()) return it->second;
  auto dir = std::filesystem::path(data_dir_) / "apps" / app_id;
  std::filesystem::create_directories(dir);
  auto db = storage::OpenSqlite((dir / "data.db").string(), options_.durability, options_.readers);
  auto app = std::make_shared<Application>(app_id, std::move(db));
  open_.emplace(app_id, app);
  return app;
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
