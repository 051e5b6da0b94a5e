// storage/registry_store and auth/registry: every application has its own webhook secret
// (docs/TRIGGERS.md, "Webhooks"): drawn at create, drawn for each application of a registry of an
// earlier release when it is opened, replaced by a rotation, and carried to the server's view; on
// both stores (a SQLite file, and the `crmd` schema of a throw-away PostgreSQL cluster).
#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <string>
#include <thread>

#include "auth/gates.hpp"
#include "auth/registry.hpp"
#include "storage/registry_store.hpp"
#include "storage/sqlite/connection.hpp"
#include "temp_dir.hpp"
#include "test_store.hpp"
#include "util/json.hpp"

namespace crmd::storage {
namespace {

bool IsWebhookSecret(const std::string& secret) {
  return secret.size() == 64 && secret.find_first_not_of("0123456789abcdef") == std::string::npos;
}

AppRecord App(const std::string& app_id) {
  AppRecord app;
  app.app_id = app_id;
  app.name = app_id;
  app.master_key_hash = "hash";
  app.created_at = "2026-01-01T00:00:00.000Z";
  return app;
}

TEST(RegistryWebhookSecretTest, NewSecretsAre64LowercaseHexAndDiffer) {
  const std::string a = NewWebhookSecret(), b = NewWebhookSecret();
  EXPECT_TRUE(IsWebhookSecret(a)) << a;
  EXPECT_TRUE(IsWebhookSecret(b)) << b;
  EXPECT_NE(a, b);
}

// The registry's location on the store the test runs on: the file, or a new database.
class RegistryStoreTest : public ::testing::TestWithParam<std::string> {
 protected:
  std::string Location() {
    if (location_.empty()) {
      if (GetParam() == "sqlite") {
        location_ = dir_.File("registry.db");
      } else {
        location_ = test::SharedPgCluster().NewDatabase();
      }
    }
    return location_;
  }
  test::TempDir dir_{"registry"};
  std::string location_;
};

INSTANTIATE_TEST_SUITE_P(Stores, RegistryStoreTest, ::testing::Values("sqlite", "postgresql"),
                         [](const auto& info) { return info.param; });

TEST_P(RegistryStoreTest, ACreatedAppHasItsOwnSecret) {
  auto opened = OpenRegistry(Location());
  auto& store = *opened;
  ASSERT_EQ(store.CreateApp(App("one")), RegistryChange::kDone);
  ASSERT_EQ(store.CreateApp(App("two")), RegistryChange::kDone);
  const auto one = store.Load("one"), two = store.Load("two");
  ASSERT_TRUE(one && two);
  EXPECT_TRUE(IsWebhookSecret(one->webhook_secret)) << one->webhook_secret;
  EXPECT_TRUE(IsWebhookSecret(two->webhook_secret)) << two->webhook_secret;
  EXPECT_NE(one->webhook_secret, two->webhook_secret);
  // Opening the registry again leaves secrets as they are.
  EXPECT_EQ(OpenRegistry(Location())->Load("one")->webhook_secret, one->webhook_secret);
}

TEST_P(RegistryStoreTest, OAuthRotationReplacesOnlyTheOAuthSecret) {
  auto opened = OpenRegistry(Location());
  auto& store = *opened;
  ASSERT_EQ(store.CreateApp(App("one")), RegistryChange::kDone);
  const auto before = *store.Load("one");
  EXPECT_TRUE(IsWebhookSecret(before.oauth_secret));
  ASSERT_EQ(store.SetOAuthSecret("one", NewWebhookSecret()), RegistryChange::kDone);
  const auto after = *store.Load("one");
  EXPECT_NE(after.oauth_secret, before.oauth_secret);
  EXPECT_EQ(after.webhook_secret, before.webhook_secret);
  EXPECT_EQ(store.SetOAuthSecret("nope", NewWebhookSecret()), RegistryChange::kNoSuchApp);
}

TEST_P(RegistryStoreTest, RotationReplacesTheSecretAndReachesTheServersView) {
  auto opened = OpenRegistry(Location());
  auto& store = *opened;
  ASSERT_EQ(store.CreateApp(App("one")), RegistryChange::kDone);
  const std::string before = store.Load("one")->webhook_secret;
  const std::string next = NewWebhookSecret();
  EXPECT_EQ(store.SetWebhookSecret("one", next), RegistryChange::kDone);
  EXPECT_EQ(store.Load("one")->webhook_secret, next);
  EXPECT_NE(next, before);
  EXPECT_EQ(store.SetWebhookSecret("nobody", next), RegistryChange::kNoSuchApp);
  auth::Registry registry(Location());
  auto credentials = registry.Find("one");
  ASSERT_TRUE(credentials);
  EXPECT_EQ(credentials->webhook_secret, next);
}

// An application's gates (auth/gates.hpp): the spec's by default, stored as `crmd app set` writes
// them, and what the server's view applies.
TEST_P(RegistryStoreTest, GatesAreStoredPerApplicationAndReachTheServersView) {
  auto opened = OpenRegistry(Location());
  auto& store = *opened;
  ASSERT_EQ(store.CreateApp(App("plain")), RegistryChange::kDone);
  AppRecord parse = App("parse");
  parse.gates = ToJson(auth::GatesObject(auth::Gates::Parse()));
  ASSERT_EQ(store.CreateApp(parse), RegistryChange::kDone);
  EXPECT_EQ(store.Load("plain")->gates, "");
  {
    auth::Registry registry(Location());
    EXPECT_EQ(registry.Find("plain")->gates, auth::Gates{});
    EXPECT_EQ(registry.Find("parse")->gates, auth::Gates::Parse());
  }
  auth::Gates one;
  ASSERT_FALSE(auth::SetGate(one, "captcha", "off"));
  EXPECT_EQ(store.SetGates("plain", ToJson(auth::GatesObject(one))), RegistryChange::kDone);
  EXPECT_EQ(store.SetGates("nobody", "{}"), RegistryChange::kNoSuchApp);
  auth::Registry registry(Location());
  const auto gates = registry.Find("plain")->gates;
  EXPECT_FALSE(gates.captcha);
  EXPECT_TRUE(gates.signup_needs_key && gates.password_policy && gates.closed_new_classes && !gates.dotted_keys);
}

// Two processes making one new registry at once (two `app create` on a new --data): both open it
// and both applications are in it. Threads with a connection each lock the file as processes do.
TEST(SqliteRegistryTest, TwoOpeningANewRegistryAtOnceBothSucceed) {
  for (int round = 0; round < 20; ++round) {
    test::TempDir dir("registry-race");
    const std::string path = dir.File("registry.db");
    std::atomic<int> failed{0};
    auto open_and_create = [&](const std::string& id) {
      try {
        OpenSqliteRegistry(path)->CreateApp(App(id));
      } catch (const std::exception&) {
        ++failed;
      }
    };
    std::thread a(open_and_create, "a"), b(open_and_create, "b");
    a.join();
    b.join();
    ASSERT_EQ(failed.load(), 0) << "round " << round;
    std::set<std::string> ids;
    for (const auto& app : OpenSqliteRegistry(path)->LoadAll()) ids.insert(app.app_id);
    EXPECT_EQ(ids, (std::set<std::string>{"a", "b"}));
  }
}

TEST(GatesTest, SettingsRefuseUnknownNamesAndValuesAndStoredTextKeepsDefaults) {
  auth::Gates gates;
  EXPECT_EQ(auth::SetGate(gates, "signup", "maybe"), "--signup takes key or open");
  EXPECT_EQ(auth::SetGate(gates, "mongo", "on"), "no gate named mongo");
  EXPECT_EQ(gates, auth::Gates{});
  EXPECT_FALSE(auth::SetGate(gates, "dotted-keys", "on"));
  EXPECT_TRUE(gates.dotted_keys);
  // What a newer release may store, or a hand edit, never opens a gate by accident.
  EXPECT_EQ(auth::GatesFrom("not json"), auth::Gates{});
  EXPECT_EQ(auth::GatesFrom(R"({"captcha":"maybe","signup":"open"})").captcha, true);
  EXPECT_EQ(auth::GatesFrom(R"({"captcha":"maybe","signup":"open"})").signup_needs_key, false);
}

// The `apps` table as the release before webhooks made it.
TEST(RegistryWebhookSecretTest, AnOlderRegistryGetsTheColumnAndASecretPerApp) {
  test::TempDir dir("registry");
  {
    sqlite::Connection c(dir.File("registry.db"), /*sync_full=*/true);
    c.Exec(
        "CREATE TABLE apps (app_id TEXT PRIMARY KEY NOT NULL, name TEXT NOT NULL, "
        "master_key_hash TEXT NOT NULL, created_at TEXT NOT NULL, region TEXT NOT NULL DEFAULT 'IL')");
    c.Exec(
        "INSERT INTO apps (app_id, name, master_key_hash, created_at) VALUES "
        "('one', 'One', 'h1', '2025-01-01T00:00:00.000Z'), ('two', 'Two', 'h2', '2025-01-01T00:00:00.000Z')");
  }
  std::set<std::string> secrets;
  {
    auto store = OpenSqliteRegistry(dir.File("registry.db"));
    for (const auto& app : store->LoadAll()) {
      EXPECT_TRUE(IsWebhookSecret(app.webhook_secret)) << app.app_id << ": " << app.webhook_secret;
      // And the OAuth secret of MCP sign-in (issue 21), its own, not the webhook one.
      EXPECT_TRUE(IsWebhookSecret(app.oauth_secret)) << app.app_id << ": " << app.oauth_secret;
      EXPECT_NE(app.oauth_secret, app.webhook_secret);
      secrets.insert(app.webhook_secret);
      secrets.insert(app.oauth_secret);
      EXPECT_EQ(app.region, "IL");
      EXPECT_EQ(app.gates, "");  // the spec's gates (issue 23)
    }
    EXPECT_EQ(secrets.size(), 4u);
  }
  std::set<std::string> again;
  for (const auto& app : OpenSqliteRegistry(dir.File("registry.db"))->LoadAll()) {
    again.insert(app.webhook_secret);
    again.insert(app.oauth_secret);
  }
  EXPECT_EQ(again, secrets);
}

// Every change moves the version the servers poll, in its own transaction; a refused one does not.
TEST_P(RegistryStoreTest, EveryChangeMovesTheDataVersionSeenByAnotherConnection) {
  auto writer = OpenRegistry(Location());
  auto watcher = OpenRegistry(Location());
  auto version = watcher->DataVersion();
  auto moved = [&] {
    const auto now = watcher->DataVersion();
    const bool changed = now != version;
    version = now;
    return changed;
  };
  ASSERT_EQ(writer->CreateApp(App("one")), RegistryChange::kDone);
  EXPECT_TRUE(moved());
  ASSERT_EQ(writer->AddApiKey("one", {"second", "h", "2026-01-01T00:00:00.000Z", std::nullopt}), RegistryChange::kDone);
  EXPECT_TRUE(moved());
  ASSERT_EQ(writer->RevokeApiKey("one", "second", "2026-01-02T00:00:00.000Z"), RegistryChange::kDone);
  EXPECT_TRUE(moved());
  EXPECT_EQ(writer->RevokeApiKey("one", "second", "2026-01-02T00:00:00.000Z"), RegistryChange::kNoSuchKey);
  EXPECT_EQ(writer->CreateApp(App("one")), RegistryChange::kAlreadyExists);
  ASSERT_EQ(writer->DeployFunction("one", {"f", "return 1", "2026-01-01T00:00:00.000Z"}), RegistryChange::kDone);
  EXPECT_TRUE(moved());
  const auto app = watcher->Load("one");
  ASSERT_TRUE(app);
  ASSERT_EQ(app->api_keys.size(), 1u);
  EXPECT_EQ(app->api_keys[0].name, "second");
  EXPECT_TRUE(app->api_keys[0].revoked_at);
  ASSERT_EQ(app->functions.size(), 1u);
  EXPECT_EQ(app->functions[0].code, "return 1");
}

}  // namespace
}  // namespace crmd::storage
