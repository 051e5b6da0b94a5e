// Issue 33: how the servers on one PostgreSQL database take over the trigger activations of one that
// died or stopped (storage/outbox_takeover.hpp): a live server's claims are never taken, however
// old; a dead one's outboxes are listed, each entry handed over once its own claim ran out, and the
// dead holder forgotten once it holds nothing.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "storage/stores.hpp"
#include "test_store.hpp"

namespace crmd::storage {
namespace {

using Claim = Outbox::Claim;
using std::chrono::seconds;

class PgOutboxTakeoverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    url_ = test::SharedPgCluster().NewDatabase();
    a_ = PostgresStores(url_, 4, "server-a");
    b_ = PostgresStores(url_, 4, "server-b");
  }
  static std::int64_t Add(Database& db) {
    auto txn = db.BeginWrite();
    const auto id = txn->outbox().AddOutbox(0, "{}");
    txn->Commit();
    return id;
  }
  OutboxTakeover& A() { return *a_->outbox_takeover(); }
  OutboxTakeover& B() { return *b_->outbox_takeover(); }
  std::string url_;
  std::unique_ptr<Stores> a_, b_;
};

TEST_F(PgOutboxTakeoverTest, ALiveServersClaimsAreNeverTakenHoweverOld) {
  A().KeepAlive(seconds(60));
  B().KeepAlive(seconds(60));
  auto on_a = a_->Open("app1");
  auto on_b = b_->Open("app1");
  const auto id = Add(*on_a);
  EXPECT_EQ(on_a->ClaimOutbox(id, seconds(1)), Claim::kTaken);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // the claim's lease ran out
  EXPECT_TRUE(B().Orphans(std::nullopt, 10).empty());
  EXPECT_EQ(on_b->ClaimOutbox(id, seconds(60)), Claim::kHeld);
  EXPECT_TRUE(on_b->ReadClaimable(0, 10).empty());
  EXPECT_EQ(on_a->ReadClaimable(0, 10).size(), 1u) << "its own";
  EXPECT_EQ(on_b->ReadOutbox(0, 10).size(), 1u) << "still there";
}

TEST_F(PgOutboxTakeoverTest, ADeadServersEntriesAreHandedOverAsTheirClaimsEndThenItIsForgotten) {
  A().KeepAlive(seconds(1));  // its entries' birth claims last as long
  B().KeepAlive(seconds(60));
  auto on_a = a_->Open("app1");
  const auto waiting = Add(*on_a);
  const auto running = Add(*on_a);
  EXPECT_EQ(on_a->ClaimOutbox(running, seconds(3)), Claim::kTaken);
  EXPECT_TRUE(B().Orphans(std::nullopt, 10).empty()) << "alive";

  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // A died: its beat lapsed
  const auto orphans = B().Orphans(std::nullopt, 10);
  ASSERT_EQ(orphans.size(), 1u);
  EXPECT_EQ(orphans[0].process, "server-a");
  EXPECT_EQ(orphans[0].app_id, "app1");
  auto found = B().Look(orphans[0], 0, 10);
  ASSERT_EQ(found.due.size(), 1u);
  EXPECT_EQ(found.due[0].id, waiting);
  ASSERT_TRUE(found.next.has_value()) << "the running one's claim";
  EXPECT_GT(found.next->count(), 0);
  EXPECT_LE(found.next->count(), 2000);
  EXPECT_FALSE(found.cleared);

  auto on_b = b_->Open("app1");
  EXPECT_EQ(on_b->ClaimOutbox(waiting, seconds(60)), Claim::kTaken);
  EXPECT_EQ(on_b->ClaimOutbox(running, seconds(60)), Claim::kHeld) << "its own claim still runs";
  std::this_thread::sleep_for(*found.next + std::chrono::milliseconds(100));
  found = B().Look(orphans[0], 0, 10);
  ASSERT_EQ(found.due.size(), 1u);
  EXPECT_EQ(found.due[0].id, running);
  EXPECT_FALSE(found.next.has_value());
  EXPECT_EQ(on_b->ClaimOutbox(running, seconds(60)), Claim::kTaken);
  EXPECT_TRUE(B().Look(orphans[0], 0, 10).cleared) << "it holds nothing more";
  EXPECT_TRUE(B().Orphans(std::nullopt, 10).empty());

  // B holds them now, and is found in turn once it stops.
  B().Retire();
  A().KeepAlive(seconds(60));
  const auto now_orphans = A().Orphans(std::nullopt, 10);
  ASSERT_EQ(now_orphans.size(), 1u);
  EXPECT_EQ(now_orphans[0].process, "server-b");
}

TEST_F(PgOutboxTakeoverTest, ALookReadsAtMostItsLimitAndGoesOnAfterTheLastIdHandedOver) {
  A().KeepAlive(seconds(1));
  auto on_a = a_->Open("app1");
  std::vector<std::int64_t> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(Add(*on_a));
  A().Retire();  // stopped: found at once, its entries as their birth claims end
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  const auto orphans = B().Orphans(std::nullopt, 10);
  ASSERT_EQ(orphans.size(), 1u);
  auto first = B().Look(orphans[0], 0, 3);
  ASSERT_EQ(first.due.size(), 3u);
  EXPECT_EQ(first.due.back().id, ids[2]);
  auto rest = B().Look(orphans[0], first.due.back().id, 3);
  ASSERT_EQ(rest.due.size(), 2u);
  EXPECT_EQ(rest.due[0].id, ids[3]);
  EXPECT_FALSE(rest.cleared) << "still claimed by it";
}

TEST_F(PgOutboxTakeoverTest, TheHoldersOfARemovedStoreAreForgotten) {
  A().KeepAlive(seconds(1));
  Add(*a_->Open("app1"));
  A().Retire();
  ASSERT_EQ(B().Orphans(std::nullopt, 10).size(), 1u);
  b_->Remove("app1");
  EXPECT_TRUE(B().Orphans(std::nullopt, 10).empty());
}

TEST_F(PgOutboxTakeoverTest, AServerThatComesBackUnderItsNameTakesBackItsOwnAtOnce) {
  A().KeepAlive(seconds(60));
  auto on_a = a_->Open("app1");
  const auto id = Add(*on_a);
  EXPECT_EQ(on_a->ClaimOutbox(id, seconds(60)), Claim::kTaken);
  // Killed; started again under the same name (a new pool): its recovery reads it and claims it.
  auto again = PostgresStores(url_, 1, "server-a");
  again->outbox_takeover()->KeepAlive(seconds(60));
  auto on_again = again->Open("app1");
  ASSERT_EQ(on_again->ReadClaimable(0, 10).size(), 1u);
  EXPECT_EQ(on_again->ClaimOutbox(id, seconds(60)), Claim::kTaken);
}

}  // namespace
}  // namespace crmd::storage
