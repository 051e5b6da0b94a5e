#include "storage/database.hpp"

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>

namespace crmd::storage {

namespace {
thread_local std::optional<std::chrono::steady_clock::time_point> t_deadline;
std::atomic<bool> g_ended{false};
std::mutex g_hooks_mutex;
std::map<int, std::function<void()>> g_hooks;
int g_next_hook = 0;
}  // namespace

ReadDeadline::ReadDeadline(std::chrono::steady_clock::time_point deadline) : previous_(t_deadline) {
  t_deadline = deadline;
}

ReadDeadline::ReadDeadline(std::nullopt_t) : previous_(t_deadline) { t_deadline.reset(); }

ReadDeadline::~ReadDeadline() { t_deadline = previous_; }

bool ReadDeadline::Passed() {
  return t_deadline && (g_ended.load(std::memory_order_relaxed) || std::chrono::steady_clock::now() >= *t_deadline);
}

std::optional<std::chrono::milliseconds> ReadDeadline::Remaining() {
  if (!t_deadline) return std::nullopt;
  if (g_ended.load(std::memory_order_relaxed)) return std::chrono::milliseconds(0);
  const auto left = *t_deadline - std::chrono::steady_clock::now();
  return std::max(std::chrono::milliseconds(0), std::chrono::duration_cast<std::chrono::milliseconds>(left));
}

void ReadDeadline::EndAll() {
  g_ended.store(true, std::memory_order_relaxed);
  std::lock_guard lock(g_hooks_mutex);
  for (const auto& [id, hook] : g_hooks) hook();
}

int ReadDeadline::AddEndAllHook(std::function<void()> hook) {
  std::lock_guard lock(g_hooks_mutex);
  g_hooks.emplace(++g_next_hook, std::move(hook));
  return g_next_hook;
}

void ReadDeadline::RemoveEndAllHook(int id) {
  std::lock_guard lock(g_hooks_mutex);
  g_hooks.erase(id);
}

}  // namespace crmd::storage
