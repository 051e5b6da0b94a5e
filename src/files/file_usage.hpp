// What an application's kept files take on disk, for its quota (issue 31 #18, `crmd app set
// --file-quota-mib`): the sizes in `DATA/apps/<appId>/files/`, counted from the folder at most
// every kRecount and kept up to date in between by this process's uploads. An upload takes its
// bytes before it is kept, so uploads running at once cannot pass the quota together.
//
// Files removed by another process (`crmd files gc`, another server sharing `--data`) and files
// another server keeps count from the next recount: up to kRecount late, never for long.
// Thread-safe; one tally per application folder for the life of the process (a few dozen bytes,
// and only for applications with a quota).
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

namespace crmd::files {

class FileUsage {
 public:
  // How stale the count may be before an upload counts the folder again: short enough that
  // another process's removals count soon, long enough that a busy application reads its folder
  // a few times an hour, not per upload.
  static constexpr std::chrono::seconds kRecount{60};

  // The tally of the application at `app_dir`.
  static FileUsage& Of(const std::string& app_dir);

  // Takes `bytes` for an upload about to be kept: false (nothing taken) when the files kept and
  // being kept would then pass `quota_bytes`. Counts the folder when the count is older than
  // kRecount.
  bool Take(std::uint64_t bytes, std::uint64_t quota_bytes);
  // The upload Take was for was kept (`kept`) or not: its bytes move from the uploads in flight
  // to the files kept, or go back.
  void Settle(std::uint64_t bytes, bool kept);
  // Whether `bytes` more would still fit, by the count at hand (no folder read: quick enough for
  // a request's head); nullopt when there is no recent count.
  std::optional<bool> Fits(std::uint64_t bytes, std::uint64_t quota_bytes) const;
  // A file went: the folder is counted again at the next Take.
  void Forget();

  explicit FileUsage(std::string app_dir) : app_dir_(std::move(app_dir)) {}

 private:
  bool Fresh(std::chrono::steady_clock::time_point now) const;  // mutex_ held

  const std::string app_dir_;
  mutable std::mutex mutex_;
  std::uint64_t kept_ = 0;       // the folder's bytes at the last count, plus what was kept since
  std::uint64_t in_flight_ = 0;  // taken by uploads not yet kept
  std::optional<std::chrono::steady_clock::time_point> counted_at_;
};

}  // namespace crmd::files
