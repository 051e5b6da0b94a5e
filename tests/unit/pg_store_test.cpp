// The PostgreSQL store's own mechanisms (issue 22), on a throw-away cluster: the NUL escape both
// ways, the claims that let several servers share trigger outboxes, and the notification every
// server on the database gets of a schema change.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "schema/class_schema.hpp"
#include "storage/postgres/connection.hpp"
#include "storage/stores.hpp"
#include "test_store.hpp"

namespace crmd::storage {
namespace {

TEST(PgEscapeTest, NulAndItsEscapesRoundTripAndNothingElseChanges) {
  using postgres::EscapeNul;
  using postgres::UnescapeNul;
  for (const std::string& text : {std::string("plain é text"), std::string("a\0b", 3), std::string("\x01", 1),
                                  std::string("\x01" "0", 2), std::string(R"({"a":"x\u0000y"})"),
                                  std::string(R"(\u0001 and \\u0000 and \u00011)"), std::string("\0\0\x01\x01", 4)}) {
    const std::string escaped = EscapeNul(text);
    EXPECT_EQ(escaped.find('\0'), std::string::npos) << text;
    EXPECT_EQ(escaped.find("\\u0000"), std::string::npos) << text;
    EXPECT_EQ(UnescapeNul(escaped), text);
  }
  EXPECT_FALSE(postgres::NeedsEscape("plain é text"));
  EXPECT_EQ(EscapeNul("plain é text"), "plain é text");
}

class PgStoresTest : public ::testing::Test {
 protected:
  void SetUp() override {
    url_ = test::SharedPgCluster().NewDatabase();
    a_ = PostgresStores(url_, 4, "server-a");
    b_ = PostgresStores(url_, 4, "server-b");
  }
  std::string url_;
  std::unique_ptr<Stores> a_, b_;
};

TEST_F(PgStoresTest, AnOutboxEntryIsRunByOneServerAtATime) {
  auto on_a = a_->Open("app1");
  auto on_b = b_->Open("app1");
  std::int64_t id = 0;
  {
    auto txn = on_a->BeginWrite();
    id = txn->outbox().AddOutbox(0, "{}");
    txn->Commit();
  }
  using Claim = Outbox::Claim;
  EXPECT_EQ(on_a->ClaimOutbox(id, std::chrono::seconds(60)), Claim::kTaken);
  EXPECT_EQ(on_b->ClaimOutbox(id, std::chrono::seconds(60)), Claim::kHeld);
  EXPECT_EQ(on_a->ClaimOutbox(id, std::chrono::seconds(1)), Claim::kTaken);  // its own: kept, shorter
  // The same server restarted (the same name, a new pool) takes back what it held.
  EXPECT_EQ(PostgresStores(url_, 1, "server-a")->Open("app1")->ClaimOutbox(id, std::chrono::seconds(1)), Claim::kTaken);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  b_->outbox_takeover()->Orphans(std::nullopt, 0);  // who is alive: not server-a, which never beat
  EXPECT_EQ(on_b->ClaimOutbox(id, std::chrono::seconds(60)), Claim::kTaken);  // the lease ran out
  EXPECT_EQ(on_a->ClaimOutbox(id, std::chrono::seconds(60)), Claim::kHeld);
  {
    auto txn = on_b->BeginWrite();
    txn->outbox().RemoveOutbox(id);
    txn->Commit();
  }
  EXPECT_EQ(on_a->ClaimOutbox(id, std::chrono::seconds(60)), Claim::kGone);
}

TEST_F(PgStoresTest, EveryServerHearsOfASchemaChangeWhenItCommits) {
  std::mutex mutex;
  std::vector<std::string> heard;
  b_->Watch([&](const std::string& app_id) {
    std::lock_guard lock(mutex);
    heard.push_back(app_id);
  });
  auto db = a_->Open("app2");
  auto heard_app2 = [&] {
    std::lock_guard lock(mutex);
    return std::find(heard.begin(), heard.end(), "app2") != heard.end();
  };
  auto wait = [&] {
    for (int i = 0; i < 200 && !heard_app2(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return heard_app2();
  };
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // b listens
  auto cls = schema::ClassSchema::NewImplicit("Things");
  {
    auto txn = db->BeginWrite(/*exclusive=*/true);
    txn->SaveClass(nullptr, cls);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_FALSE(heard_app2()) << "heard before the commit";
    txn->Commit();
  }
  EXPECT_TRUE(wait());
  b_->StopWatching();
}

// Issue 36: what a write transaction announces reaches every server once it commits, in commit
// order, and never when it rolls back.
TEST_F(PgStoresTest, AnnouncementsReachEveryServerAtCommitAndNeverFromARollback) {
  std::mutex mutex;
  std::vector<std::string> heard;
  b_->WatchRecords([&](std::string_view payload) {
    std::lock_guard lock(mutex);
    heard.emplace_back(payload);
  });
  auto db = a_->Open("app3");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // b listens
  {
    auto txn = db->BeginWrite(/*exclusive=*/false);
    EXPECT_TRUE(txn->Announce("rolled back"));
  }  // rolled back
  for (const char* payload : {"first", "second"}) {
    auto txn = db->BeginWrite(/*exclusive=*/false);
    EXPECT_TRUE(txn->Announce(payload));
    txn->Commit();
  }
  auto count = [&] {
    std::lock_guard lock(mutex);
    return heard.size();
  };
  for (int i = 0; i < 200 && count() < 2; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  b_->StopWatchingRecords();
  EXPECT_EQ(heard, (std::vector<std::string>{"first", "second"}));
}

}  // namespace
}  // namespace crmd::storage
