// The store double for unit tests of the layers above storage/ (app/, write/, query/, triggers/):
// an app::Application over a single-file SQLite store in the test's temporary directory, or over a
// new database of the run's PostgreSQL cluster (test_store.hpp), so that one test runs on both.
// Those layers reach the store only through the application's narrow views: db() (RecordStore),
// trigger_outbox() (Outbox) and store_admin() (StoreAdmin); so does a test built on this.
#pragma once

#include <memory>
#include <string>

#include "app/application.hpp"
#include "auth/context.hpp"
#include "temp_dir.hpp"
#include "test_store.hpp"

namespace crmd::test {

class TestApp {
 public:
  // `kind`: "sqlite" or "postgresql" (AllStores()). Commits are fully durable, as a server's are
  // by default: a test that reads what another connection sees reads what a restart would.
  explicit TestApp(const std::string& tag, const std::string& kind = "sqlite") : dir_(tag) {
    app = std::make_shared<app::Application>("t", OpenTestStore(kind, dir_, 2, storage::Durability::kFull),
                                             dir_.path().string(), settings_, nullptr);
  }

  // A context of the master key: it skips every ACL and CLP.
  auth::Context Master() const { return As(auth::Principal::kMaster); }
  // A context of the application id alone.
  auth::Context Anonymous() const { return As(auth::Principal::kAnonymous); }
  // A context of user `user_id`, with no roles and no session row behind it.
  auth::Context User(const std::string& user_id) const {
    auto ctx = As(auth::Principal::kUser);
    ctx.identity.user_id = user_id;
    return ctx;
  }

  std::string dir() const { return dir_.path().string(); }

 private:
  auth::Context As(auth::Principal principal) const {
    auth::Context ctx;
    ctx.app = app;
    ctx.identity.principal = principal;
    return ctx;
  }

  TempDir dir_;  // before app: removed after the store is closed
  app::Settings settings_;

 public:
  std::shared_ptr<app::Application> app;
};

}  // namespace crmd::test
