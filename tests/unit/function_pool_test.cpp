// app::FunctionPool and app::FanOut (issue 31 #4c, #4d, #18): one application's functions hold
// at most its share of threads, however they came, and applications take turns; a trigger chain
// fires at most its budget of activations.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "app/fan_out.hpp"
#include "app/function_pool.hpp"

namespace crmd::app {
namespace {

// Calls that wait until released, counting how many of each application run at once.
struct Gate {
  std::mutex mutex;
  std::condition_variable changed;
  bool open = false;
  std::map<std::string, int> running, most;
  std::vector<std::string> started;

  std::function<void()> Call(const std::string& app) {
    return [this, app] {
      std::unique_lock lock(mutex);
      started.push_back(app);
      most[app] = std::max(most[app], ++running[app]);
      changed.notify_all();
      changed.wait(lock, [&] { return open; });
      --running[app];
    };
  }
  // Waits (at most 10 s: a bound against a hang, not a timing) until `n` calls started.
  bool Started(std::size_t n) {
    std::unique_lock lock(mutex);
    return changed.wait_for(lock, std::chrono::seconds(10), [&] { return started.size() >= n; });
  }
  void Open() {
    std::lock_guard lock(mutex);
    open = true;
    changed.notify_all();
  }
};

TEST(FunctionPoolTest, AnApplicationRunsAtMostItsShareAndTheOthersGetTheRestOfTheThreads) {
  FunctionPool pool({.threads = 4, .per_app = 2, .waiting_per_app = 100});
  Gate gate;
  for (int i = 0; i < 16; ++i) ASSERT_TRUE(pool.Submit("hostile", gate.Call("hostile")));
  ASSERT_TRUE(gate.Started(2));
  ASSERT_TRUE(pool.Submit("calm", gate.Call("calm")));
  ASSERT_TRUE(gate.Started(3));  // a free thread takes the other application's call at once
  {
    std::lock_guard lock(gate.mutex);
    EXPECT_EQ(gate.started.back(), "calm");
    EXPECT_EQ(gate.running["hostile"], 2);
  }
  EXPECT_EQ(pool.running("hostile"), 2);
  EXPECT_EQ(pool.waiting("hostile"), 14u);
  // Calls on threads of their own (trigger actions, MCP tools) share the same slots.
  EXPECT_FALSE(pool.TryEnter("hostile").has_value());
  auto slot = pool.TryEnter("other");
  EXPECT_TRUE(slot.has_value());
  gate.Open();
  pool.Stop();
  EXPECT_EQ(gate.most["hostile"], 2);
}

TEST(FunctionPoolTest, AFullQueueRefusesAndASlotGivenBackLetsTheNextCallRun) {
  FunctionPool pool({.threads = 2, .per_app = 1, .waiting_per_app = 2});
  Gate gate;
  auto held = pool.TryEnter("a");  // a trigger's call holds the application's only slot
  ASSERT_TRUE(held.has_value());
  EXPECT_TRUE(pool.Submit("a", gate.Call("a")));
  EXPECT_TRUE(pool.Submit("a", gate.Call("a")));
  EXPECT_FALSE(pool.Submit("a", gate.Call("a"))) << "the queue holds at most waiting_per_app calls";
  EXPECT_EQ(pool.running("a"), 1);
  held.reset();  // given back: a waiting call runs
  ASSERT_TRUE(gate.Started(1));
  gate.Open();
  ASSERT_TRUE(gate.Started(2));
  pool.Stop();
  EXPECT_FALSE(pool.Submit("a", gate.Call("a"))) << "nothing is queued once stopped";
}

TEST(FanOutTest, AChainFiresAtMostItsBudgetAndChainsAreCountedApart) {
  FanOut fan_out;
  EXPECT_TRUE(fan_out.Take("root1", 600, 1000));
  EXPECT_TRUE(fan_out.Take("root1", 400, 1000));
  EXPECT_FALSE(fan_out.Take("root1", 1, 1000));
  EXPECT_TRUE(fan_out.Take("root2", 1000, 1000));
  EXPECT_FALSE(fan_out.Take("root3", 1001, 1000)) << "nothing is counted for a refused take";
  EXPECT_TRUE(fan_out.Take("root3", 1000, 1000));
}

TEST(FanOutTest, TheTableIsBoundedAndForgetsTheLeastRecentChainFirst) {
  FanOut fan_out;
  ASSERT_TRUE(fan_out.Take("first", 10, 10));
  for (std::size_t i = 0; i < FanOut::kMaxChains; ++i) ASSERT_TRUE(fan_out.Take(std::to_string(i), 1, 10));
  EXPECT_TRUE(fan_out.Take("first", 10, 10)) << "forgotten: counted from zero again";
  EXPECT_FALSE(fan_out.Take(std::to_string(FanOut::kMaxChains - 1), 10, 10)) << "a recent chain is remembered";
}

}  // namespace
}  // namespace crmd::app
