// triggers::FairQueue (issue 19): applications take turns, one job of an application at a time,
// so one tenant's slow actions never hold the threads every tenant shares.
#include <gtest/gtest.h>

#include <string>

#include "triggers/fair_queue.hpp"

namespace crmd::triggers {
namespace {

struct Job {
  std::string app_id;
  int n = 0;
};

TEST(FairQueueTest, AnApplicationRunsOneJobAtATimeAndApplicationsTakeTurns) {
  FairQueue<Job> q;
  q.Push({"a", 1});
  q.Push({"a", 2});
  q.Push({"a", 3});
  q.Push({"b", 1});
  EXPECT_EQ(q.size(), 4u);
  auto first = q.Take();
  ASSERT_TRUE(first);
  EXPECT_EQ(first->app_id, "a");
  EXPECT_EQ(first->n, 1);
  auto second = q.Take();  // a's next waits for a's first: b's turn
  ASSERT_TRUE(second);
  EXPECT_EQ(second->app_id, "b");
  EXPECT_FALSE(q.Take());  // both applications are running
  q.Push({"b", 2});
  EXPECT_FALSE(q.Take());  // still running
  q.Done("a");
  auto third = q.Take();
  ASSERT_TRUE(third);
  EXPECT_EQ(third->app_id, "a");
  EXPECT_EQ(third->n, 2);
  q.Done("b");
  auto fourth = q.Take();
  ASSERT_TRUE(fourth);
  EXPECT_EQ(fourth->app_id, "b");
  EXPECT_EQ(fourth->n, 2);
  q.Done("a");
  q.Done("b");
  auto last = q.Take();
  ASSERT_TRUE(last);
  EXPECT_EQ(last->n, 3);
  q.Done("a");
  EXPECT_FALSE(q.Take());
  EXPECT_EQ(q.size(), 0u);
}

}  // namespace
}  // namespace crmd::triggers
