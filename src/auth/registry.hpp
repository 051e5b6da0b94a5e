// The server's view of `DATA/registry.db`: which applications exist and which key hashes they
// accept. The CLI changes the file; a watcher thread reloads it when SQLite's data_version moves,
// so a revoked key stops working within one poll interval (spec: within 1 s).
//
// Thread-safe: Find() may be called from any thread; the snapshot it returns is immutable.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "auth/gates.hpp"

namespace crmd::auth {

struct ApiKey {
  std::string name;
  std::string hash;
};

struct AppCredentials {
  std::string app_id;
  std::string name;
  std::string master_key_hash;
  std::vector<ApiKey> api_keys;  // active keys only
  std::string region;            // phone numbers without a country code are read in it
  // Operator-deployed functions (`crmd function deploy`): name to Lua source.
  std::map<std::string, std::shared_ptr<const std::string>, std::less<>> functions;
  // Keys the X-Crmd-Signature of the application's webhooks; a rotation reaches the server with
  // the next reload.
  std::string webhook_secret;
  // Keys crmd's OAuth server for the application's MCP sign-in (auth/oauth.hpp).
  std::string oauth_secret;
  Gates gates;  // `crmd app set`: which of the spec's product gates hold
};

class Registry {
 public:
  // How often the watcher looks for CLI changes: well inside the 1 s the spec allows.
  static constexpr std::chrono::milliseconds kPollInterval{200};

  explicit Registry(std::string registry_path);
  ~Registry();

  // Null when the application is unknown.
  std::shared_ptr<const AppCredentials> Find(std::string_view app_id) const;

  // Called on the watcher's thread with the id of each application a reload no longer finds
  // (`crmd app delete`, `app import --replace`): the server lets go of its store, so the files
  // are freed and an application made again under the id opens its new store. Set before
  // StartWatching(); must not call back into the registry.
  void OnRemoved(std::function<void(const std::string& app_id)> removed) { on_removed_ = std::move(removed); }

  void StartWatching();
  void StopWatching();
  // False while the registry's polls fail (a database down, a file unreadable): `/ready`.
  bool Healthy() const { return healthy_.load(); }

 private:
  using Map = std::map<std::string, std::shared_ptr<const AppCredentials>, std::less<>>;
  void Reload();

  std::string path_;
  std::function<void(const std::string&)> on_removed_;
  mutable std::mutex mutex_;
  std::shared_ptr<const Map> apps_;
  // The watcher waits on stop_wake_ between polls, so that a stopping server does not wait out
  // the rest of an interval (issue 33: up to 200 ms of every SIGTERM).
  std::mutex stop_mutex_;
  std::condition_variable stop_wake_;
  bool stop_ = false;  // guarded by stop_mutex_
  std::atomic<bool> healthy_{true};
  std::thread watcher_;
};

}  // namespace crmd::auth
