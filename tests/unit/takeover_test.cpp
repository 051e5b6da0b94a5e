// Issue 33: the trigger runner's watch over the other servers (triggers/takeover.hpp), against a
// store that lists orphaned outboxes: it beats before it starts, hands over every orphaned entry
// once, a bounded number at a time and in turns between the outboxes, and retires the process
// when it stops.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <mutex>
#include <thread>

#include "triggers/takeover.hpp"

namespace crmd::triggers {
namespace {

using storage::OutboxHolder;

// Orphaned outboxes whose entries stay until the runner (the test's Found) takes them.
class FakeShared final : public storage::OutboxTakeover {
 public:
  void Add(const OutboxHolder& holder, int count) {
    std::lock_guard lock(mutex);
    for (int i = 0; i < count; ++i) entries[holder].push_back(++next_id);
  }
  void Taken(const std::string& app_id, std::int64_t id) {
    std::lock_guard lock(mutex);
    for (auto& [holder, ids] : entries)
      if (holder.app_id == app_id) std::erase(ids, id);
  }

  void KeepAlive(std::chrono::seconds) override {
    std::lock_guard lock(mutex);
    ++beats;
  }
  void Retire() override {
    std::lock_guard lock(mutex);
    retired = true;
  }
  std::vector<OutboxHolder> Orphans(const std::optional<OutboxHolder>& after, std::size_t limit) override {
    std::lock_guard lock(mutex);
    std::vector<OutboxHolder> out;
    for (const auto& [holder, ids] : entries)
      if ((!after || *after < holder) && out.size() < limit) out.push_back(holder);
    return out;
  }
  storage::OrphanedEntries Look(const OutboxHolder& holder, std::int64_t after, std::size_t limit) override {
    std::lock_guard lock(mutex);
    EXPECT_LE(limit, Takeover::kEntriesPerLook);
    storage::OrphanedEntries out;
    auto& ids = entries[holder];
    if (ids.empty()) {
      entries.erase(holder);
      out.cleared = true;
      return out;
    }
    for (auto id : ids)
      if (id > after && out.due.size() < limit) out.due.push_back({id, 0, "{}"});
    return out;
  }

  std::mutex mutex;
  std::map<OutboxHolder, std::vector<std::int64_t>> entries;
  std::int64_t next_id = 0;
  int beats = 0;
  bool retired = false;
};

TEST(TakeoverTest, EveryOrphanedEntryIsHandedOverOnceInTurnsBetweenOutboxesThenTheProcessRetires) {
  FakeShared shared;
  shared.Add({"dead", "big"}, 1200);
  shared.Add({"dead", "small1"}, 10);
  shared.Add({"dead", "small2"}, 10);
  std::mutex mutex;
  std::vector<std::pair<std::string, std::int64_t>> found;
  {
    Takeover takeover(shared, std::chrono::seconds(1), [&](const std::string& app_id, storage::OutboxEntry entry) {
      {
        std::lock_guard lock(mutex);
        found.emplace_back(app_id, entry.id);
      }
      shared.Taken(app_id, entry.id);
    });
    takeover.Start();
    {
      std::lock_guard lock(shared.mutex);
      EXPECT_GE(shared.beats, 1) << "alive before it starts";
    }
    for (int i = 0; i < 500; ++i) {
      {
        std::lock_guard lock(shared.mutex);
        if (shared.entries.empty()) break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::lock_guard lock(shared.mutex);
    EXPECT_TRUE(shared.entries.empty()) << "every outbox emptied and forgotten";
    EXPECT_FALSE(shared.retired);
  }
  EXPECT_TRUE(shared.retired) << "retired once stopped";
  ASSERT_EQ(found.size(), 1220u);
  std::map<std::int64_t, int> times;
  for (const auto& [app, id] : found) ++times[id];
  for (const auto& [id, n] : times) EXPECT_EQ(n, 1) << id;
  // The small outboxes had their turn before the big one's second look.
  std::size_t big_seen = 0, first_small = found.size();
  for (std::size_t i = 0; i < found.size(); ++i) {
    if (found[i].first == "big") ++big_seen;
    else first_small = std::min(first_small, i);
  }
  EXPECT_EQ(big_seen, 1200u);
  EXPECT_LE(first_small, Takeover::kEntriesPerLook);
}

}  // namespace
}  // namespace crmd::triggers
