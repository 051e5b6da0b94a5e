#include "auth/registry.hpp"

#include <memory>
#include <utility>

#include "storage/registry_store.hpp"
#include "util/log.hpp"

namespace crmd::auth {

Registry::Registry(std::string registry_path) : path_(std::move(registry_path)) { Reload(); }

Registry::~Registry() { StopWatching(); }

std::shared_ptr<const AppCredentials> Registry::Find(std::string_view app_id) const {
  std::shared_ptr<const Map> apps;
  {
    std::lock_guard lock(mutex_);
    apps = apps_;
  }
  auto it = apps->find(app_id);
  return it == apps->end() ? nullptr : it->second;
}

void Registry::Reload() {
  auto opened = storage::OpenRegistry(path_);
  auto& store = *opened;
  auto next = std::make_shared<Map>();
  for (auto& app : store.LoadAll()) {
    auto creds = std::make_shared<AppCredentials>();
    creds->app_id = app.app_id;
    creds->name = app.name;
    creds->master_key_hash = app.master_key_hash;
    creds->region = app.region;
    creds->webhook_secret = std::move(app.webhook_secret);
    creds->oauth_secret = std::move(app.oauth_secret);
    creds->gates = GatesFrom(app.gates);
    for (auto& fn : app.functions)
      creds->functions.emplace(std::move(fn.name), std::make_shared<const std::string>(std::move(fn.code)));
    for (auto& key : app.api_keys)
      if (!key.revoked_at) creds->api_keys.push_back({key.name, key.key_hash});
    (*next)[app.app_id] = std::move(creds);
  }
  std::shared_ptr<const Map> before;
  {
    std::lock_guard lock(mutex_);
    before = std::exchange(apps_, next);
  }
  if (!before || !on_removed_) return;
  for (const auto& [app_id, creds] : *before)
    if (!next->contains(app_id)) on_removed_(app_id);
}

void Registry::StartWatching() {
  watcher_ = std::thread([this] {
    std::unique_ptr<storage::RegistryStore> store;
    std::int64_t version = -1;
    bool store_failed = false;
    for (;;) {
      {
        std::unique_lock lock(stop_mutex_);
        if (stop_wake_.wait_for(lock, kPollInterval, [this] { return stop_; })) return;
      }
      // A failed poll (a lock held by the CLI, no file descriptors) is retried on the next tick:
      // revocations must keep reaching the server.
      try {
        if (!store) store = storage::OpenRegistry(path_);
        // -1 (first poll, or after a failure) always reloads: a change made between the last
        // load and this poll must not be missed.
        auto now = store->DataVersion();
        if (now == version) continue;
        Reload();
        version = now;
      } catch (const std::exception& e) {
        // Once per outage (a database restarting fails every poll until it is back).
        if (!store_failed) log::Error("registry poll failed", {{"error", e.what()}});
        store_failed = true;
        healthy_ = false;
        store.reset();
        version = -1;
        continue;
      }
      if (store_failed) log::Info("registry poll recovered", {});
      store_failed = false;
      healthy_ = true;
    }
  });
}

void Registry::StopWatching() {
  {
    std::lock_guard lock(stop_mutex_);
    stop_ = true;
  }
  stop_wake_.notify_all();
  if (watcher_.joinable()) watcher_.join();
}

}  // namespace crmd::auth
