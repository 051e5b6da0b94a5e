// app::WriteUnit and app::RunWrite (issue 16): nested writes join the unit of the outermost write
// whatever thread runs it, a nested write that must grow the schema runs the whole unit again
// exclusively, the schema is published at the outermost commit only, a nested write that fails
// takes its schema change and after-commit actions with it, and after-commit actions run once the
// commit is durable, on the runner's thread.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <stdexcept>
#include <thread>

#include "app/application.hpp"
#include "storage/sqlite/sqlite_store.hpp"
#include "storage/write_group.hpp"
#include "app/write_unit.hpp"
#include "storage/database.hpp"
#include "test_app.hpp"
#include "util/errors.hpp"
#include "write/record_writer.hpp"

namespace crmd::app {
namespace {

namespace json = boost::json;

// A regression of issue 16 hung the process: fail it instead, within a bound.
template <typename Fn>
auto WithinSeconds(int seconds, Fn fn) {
  auto done = std::async(std::launch::async, std::move(fn));
  if (done.wait_for(std::chrono::seconds(seconds)) != std::future_status::ready) {
    std::fprintf(stderr, "a write did not finish within %d s: nested writes deadlock\n", seconds);
    std::_Exit(1);  // the stuck thread cannot be joined
  }
  return done.get();
}

class WriteUnitTest : public ::testing::Test {
 protected:
  WriteUnitTest() {
    auto ctx = Master();
    EXPECT_TRUE(write::CreateRecord(ctx, "A", json::object{{"x", 0}}).ok());  // class A {x}
  }

  auth::Context Master() { return store_.Master(); }
  // Rows of A whose x is `x`, read by another connection: what is committed.
  std::size_t CommittedWithX(std::int64_t x) {
    schema::Query q;
    q.where = schema::FieldEquals("x", storage::Cell(x));
    q.limit = -1;
    std::size_t n = 0;
    app_->db().Find(*app_->schema()->Find("A"), q, [&](storage::Row&) { return ++n, true; });
    return n;
  }
  bool PublishedField(const std::string& field) { return app_->schema()->Find("A")->FindField(field) != nullptr; }
  bool StoredField(const std::string& field) {
    for (const auto& cls : app_->db().LoadSchema())
      if (cls->name == "A") return cls->FindField(field) != nullptr;
    return false;
  }
  // Runs `job` as a write queue's run of one job: whether its grouped writes are durable.
  bool InAGroup(const storage::WriteGroups::Job& job) { return storage::Durable(app_->db().CommitBatch({&job, 1})[0]); }

  test::TestApp store_{"write-unit"};
  std::shared_ptr<Application>& app_ = store_.app;
};

TEST_F(WriteUnitTest, Issue16ANestedWriteOnAWriterThreadJoinsTheOuterUnit) {
  // Before the unit of work, the nested write took the commit group's mutex again on the thread
  // that held it, and hung.
  auto ctx = Master();
  const bool ok = WithinSeconds(20, [&] {
    return RunWrite(ctx, [&](WriteUnit& unit) -> Status {
             EXPECT_EQ(unit.depth(), 0);
             CRMD_TRY(write::CreateRecord(ctx, "A", json::object{{"x", 1}}));
             CRMD_TRY(RunWrite(ctx, [&](WriteUnit& inner) -> Status {
               EXPECT_EQ(&inner, &unit);  // the same unit, one level down
               EXPECT_EQ(inner.depth(), 1);
               return write::CreateRecord(ctx, "A", json::object{{"x", 1}}).ok() ? Status() : errors::Internal();
             }));
             EXPECT_EQ(CommittedWithX(1), 0u);  // one transaction: nothing is committed before its end
             return {};
           })
        .ok();
  });
  EXPECT_TRUE(ok);
  EXPECT_EQ(CommittedWithX(1), 2u);
  EXPECT_EQ(ctx.unit, nullptr);
}

TEST_F(WriteUnitTest, Issue16ANestedWriteThatAddsAFieldInAWriteQueueRunsTheUnitAgainExclusively) {
  // Before the unit of work, the nested write flushed the queue's group with the outer write's
  // insert half done (committed it), and the outer commit then failed: "no such savepoint".
  auto ctx = Master();
  const auto durable = InAGroup([&](storage::WriteGroup& group) {
    ctx.queued = &group;
    {  // another job's write, before: in the group, durable at its flush
      auto other = Master();
      other.queued = &group;
      ASSERT_TRUE(write::CreateRecord(other, "A", json::object{{"x", 5}}).ok());
    }
    int attempts = 0;
    bool was_exclusive = false;
    auto outcome = RunWrite(ctx, [&](WriteUnit& unit) -> Result<json::object> {
      ++attempts;
      was_exclusive = unit.exclusive();
      CRMD_TRY(write::CreateRecord(ctx, "A", json::object{{"x", 2}}));
      return write::CreateRecord(ctx, "A", json::object{{"x", 2}, {"grown", "yes"}});
    });
    ASSERT_TRUE(outcome.ok()) << outcome.error().message;
    EXPECT_EQ(attempts, 2);
    EXPECT_TRUE(was_exclusive);
    // Both of the unit's rows and the new column committed together, once; the other job's write
    // was made durable before the exclusive unit began.
    EXPECT_EQ(CommittedWithX(2), 2u);
    EXPECT_EQ(CommittedWithX(5), 1u);
    EXPECT_TRUE(PublishedField("grown"));
    EXPECT_TRUE(StoredField("grown"));
  });
  EXPECT_TRUE(durable);
  EXPECT_TRUE(app_->store_admin().CheckIntegrity());
}

TEST_F(WriteUnitTest, Issue16AUnitThatFailsAfterANestedWriteGrewTheSchemaLeavesNothing) {
  auto ctx = Master();
  InAGroup([&](storage::WriteGroup& group) {
    ctx.queued = &group;
    auto outcome = RunWrite(ctx, [&](WriteUnit&) -> Status {
      CRMD_TRY(write::CreateRecord(ctx, "A", json::object{{"x", 3}}));
      CRMD_TRY(write::CreateRecord(ctx, "A", json::object{{"x", 3}, {"never", 1}}));
      return errors::ObjectNotFound();  // the outer write fails after both
    });
    EXPECT_FALSE(outcome.ok());
  });
  EXPECT_EQ(CommittedWithX(3), 0u);
  EXPECT_FALSE(PublishedField("never"));
  EXPECT_FALSE(StoredField("never"));
}

TEST_F(WriteUnitTest, TheSchemaIsPublishedAtTheOutermostCommitNotWhenANestedWriteEnds) {
  auto ctx = Master();
  auto outcome = RunWrite(ctx, [&](WriteUnit& unit) -> Status {
    CRMD_TRY(write::CreateRecord(ctx, "A", json::object{{"x", 4}, {"later", true}}));
    EXPECT_NE(unit.schema()->Find("A")->FindField("later"), nullptr);  // the unit's writes see it
    EXPECT_FALSE(PublishedField("later"));                            // the application does not yet
    return {};
  }, WriteStart::kExclusive);
  ASSERT_TRUE(outcome.ok());
  EXPECT_TRUE(PublishedField("later"));
  EXPECT_EQ(CommittedWithX(4), 1u);
}

TEST_F(WriteUnitTest, ANestedWriteThatFailsTakesItsRowsSchemaChangeAndActionsWithIt) {
  auto ctx = Master();
  std::atomic<int> outer_ran{0}, inner_ran{0};
  auto outcome = RunWrite(ctx, [&](WriteUnit& unit) -> Status {
    unit.AfterCommit([&] { ++outer_ran; });
    auto inner = RunWrite(ctx, [&](WriteUnit& u) -> Status {
      CRMD_TRY(write::CreateRecord(ctx, "A", json::object{{"x", 6}, {"dropped", "v"}}));
      u.AfterCommit([&] { ++inner_ran; });
      return errors::ObjectNotFound();
    });
    EXPECT_FALSE(inner.ok());
    EXPECT_EQ(unit.schema()->Find("A")->FindField("dropped"), nullptr);
    EXPECT_EQ(unit.depth(), 0);
    // An exception unwinding a nested write rolls it back too.
    EXPECT_THROW(RunWrite(ctx, [&](WriteUnit&) -> Status {
                   EXPECT_TRUE(write::CreateRecord(ctx, "A", json::object{{"x", 6}}).ok());
                   throw std::runtime_error("a fault");
                 }),
                 std::runtime_error);
    return write::CreateRecord(ctx, "A", json::object{{"x", 7}}).ok() ? Status() : errors::Internal();
  }, WriteStart::kExclusive);
  ASSERT_TRUE(outcome.ok());
  app_->after_commit().Drain();
  EXPECT_EQ(outer_ran.load(), 1);
  EXPECT_EQ(inner_ran.load(), 0);
  EXPECT_EQ(CommittedWithX(6), 0u);
  EXPECT_EQ(CommittedWithX(7), 1u);
  EXPECT_FALSE(PublishedField("dropped"));
  EXPECT_FALSE(StoredField("dropped"));
}

TEST_F(WriteUnitTest, AfterCommitActionsRunOnceDurableOnTheRunnersThreadAndNeverForARollback) {
  auto ctx = Master();
  std::promise<std::pair<std::thread::id, std::size_t>> seen;
  auto outcome = RunWrite(ctx, [&](WriteUnit& unit) -> Status {
    CRMD_TRY(write::CreateRecord(ctx, "A", json::object{{"x", 8}}));
    unit.AfterCommit([&] { seen.set_value({std::this_thread::get_id(), CommittedWithX(8)}); });
    return {};
  });
  ASSERT_TRUE(outcome.ok());
  auto [thread, committed] = seen.get_future().get();
  EXPECT_NE(thread, std::this_thread::get_id());
  EXPECT_EQ(committed, 1u);  // the write was visible to another connection when the action ran

  bool ran = false;
  auto failed = RunWrite(ctx, [&](WriteUnit& unit) -> Status {
    unit.AfterCommit([&] { ran = true; });
    return errors::ObjectNotFound();
  });
  EXPECT_FALSE(failed.ok());
  app_->after_commit().Drain();
  EXPECT_FALSE(ran);
}

TEST_F(WriteUnitTest, AtCommitActionsRunDurableBeforeTheWriteReturnsAndNeverForARollback) {
  auto ctx = Master();
  std::size_t committed_when_run = 0;
  int ran = 0, inner_ran = 0;
  auto outcome = RunWrite(ctx, [&](WriteUnit& unit) -> Status {
    CRMD_TRY(write::CreateRecord(ctx, "A", json::object{{"x", 9}}));
    unit.AtCommit([&] { committed_when_run = CommittedWithX(9), ++ran; });
    {
      auto nested = unit.Nest();
      unit.AtCommit([&] { ++inner_ran; });
    }  // rolled back: its action goes with it
    return {};
  });
  ASSERT_TRUE(outcome.ok());
  EXPECT_EQ(ran, 1);  // already, on this thread: before the write returned
  EXPECT_EQ(committed_when_run, 1u);
  EXPECT_EQ(inner_ran, 0);
  auto failed = RunWrite(ctx, [&](WriteUnit& unit) -> Status {
    unit.AtCommit([&] { ++ran; });
    return errors::ObjectNotFound();
  });
  EXPECT_FALSE(failed.ok());
  EXPECT_EQ(ran, 1);
}

TEST_F(WriteUnitTest, InAWriteQueueActionsWaitForTheFlushThatMakesTheirUnitDurable) {
  auto ctx = Master();
  std::atomic<std::size_t> committed_when_ran{99};
  InAGroup([&](storage::WriteGroup& group) {
    ctx.queued = &group;
    auto outcome = RunWrite(ctx, [&](WriteUnit& unit) -> Status {
      CRMD_TRY(write::CreateRecord(ctx, "A", json::object{{"x", 9}}));
      unit.AfterCommit([&] { committed_when_ran = CommittedWithX(9); });
      return {};
    });
    ASSERT_TRUE(outcome.ok());
    app_->after_commit().Drain();
    EXPECT_EQ(committed_when_ran.load(), 99u);  // not run: the group is not flushed yet
  });
  app_->after_commit().Drain();
  EXPECT_EQ(committed_when_ran.load(), 1u);
}

}  // namespace
}  // namespace crmd::app
