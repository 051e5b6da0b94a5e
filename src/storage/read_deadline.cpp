#include "storage/database.hpp"

#include <atomic>

namespace crmd::storage {

namespace {
thread_local std::optional<std::chrono::steady_clock::time_point> t_deadline;
std::atomic<bool> g_ended{false};
}  // namespace

ReadDeadline::ReadDeadline(std::chrono::steady_clock::time_point deadline) : previous_(t_deadline) {
  t_deadline = deadline;
}

ReadDeadline::~ReadDeadline() { t_deadline = previous_; }

bool ReadDeadline::Passed() {
  return t_deadline && (g_ended.load(std::memory_order_relaxed) || std::chrono::steady_clock::now() >= *t_deadline);
}

void ReadDeadline::EndAll() { g_ended.store(true, std::memory_order_relaxed); }

}  // namespace crmd::storage
