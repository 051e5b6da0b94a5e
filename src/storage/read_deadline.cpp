#include "storage/database.hpp"

namespace crmd::storage {

namespace {
thread_local std::optional<std::chrono::steady_clock::time_point> t_deadline;
}  // namespace

ReadDeadline::ReadDeadline(std::chrono::steady_clock::time_point deadline) : previous_(t_deadline) {
  t_deadline = deadline;
}

ReadDeadline::~ReadDeadline() { t_deadline = previous_; }

bool ReadDeadline::Passed() { return t_deadline && std::chrono::steady_clock::now() >= *t_deadline; }

}  // namespace crmd::storage
