// The time bound of the reads a thread starts (storage::ReadDeadline). Thread-safe: each thread
// has its own innermost deadline; EndAll() is for every thread at once.
#pragma once

#include <chrono>
#include <functional>
#include <optional>

namespace crmd::storage {

// The time bound of the reads this thread starts while it is in scope (they throw ReadTimedOut
// once it passed; checked every few thousand steps of SQLite's machine, and between two calls of a
// function such as $regex's). Scopes nest; the innermost decides. Reads inside a write's
// transaction are not bounded by it: the write's own limits bound them.
class ReadDeadline {
 public:
  explicit ReadDeadline(std::chrono::steady_clock::time_point deadline);
  // No bound while in scope, whatever an outer scope set, EndAll() included: for work that is not
  // one request's read and that others wait for (opening a store).
  explicit ReadDeadline(std::nullopt_t);
  ~ReadDeadline();
  ReadDeadline(const ReadDeadline&) = delete;
  ReadDeadline& operator=(const ReadDeadline&) = delete;
  // Whether this thread's innermost deadline has passed (false without one).
  static bool Passed();
  // The time this thread's innermost deadline leaves (nullopt without one), for a store that
  // bounds its statements itself (PostgreSQL's statement_timeout).
  static std::optional<std::chrono::milliseconds> Remaining();
  // Makes every deadline pass now and from now on, on every thread: a stopping server that
  // waited long enough ends the reads still running.
  static void EndAll();
  // A store whose reads do not look at the deadline while they run (PostgreSQL's statements run
  // on the server) is told by `hook` when EndAll() is called; it returns the hook's id for
  // RemoveEndAllHook.
  static int AddEndAllHook(std::function<void()> hook);
  static void RemoveEndAllHook(int id);

 private:
  std::optional<std::chrono::steady_clock::time_point> previous_;
};

}  // namespace crmd::storage
