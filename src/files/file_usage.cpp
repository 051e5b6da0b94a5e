#include "files/file_usage.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>

#include "files/file_names.hpp"

namespace crmd::files {

namespace fs = std::filesystem;

namespace {

// The bytes of the kept uploads in `app_dir`'s files folder (none: 0).
std::uint64_t CountFolder(const std::string& app_dir) {
  std::uint64_t total = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(fs::path(app_dir) / "files", ec)) {
    if (!IsStoredName(entry.path().filename().string())) continue;  // not a kept upload
    const auto size = entry.file_size(ec);
    if (!ec) total += size;
  }
  return total;
}

}  // namespace

FileUsage& FileUsage::Of(const std::string& app_dir) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<FileUsage>, std::less<>> tallies;
  std::lock_guard lock(mutex);
  auto& tally = tallies[app_dir];
  if (!tally) tally = std::make_unique<FileUsage>(app_dir);
  return *tally;
}

bool FileUsage::Fresh(std::chrono::steady_clock::time_point now) const {
  return counted_at_ && now - *counted_at_ < kRecount;
}

bool FileUsage::Take(std::uint64_t bytes, std::uint64_t quota_bytes) {
  std::lock_guard lock(mutex_);
  const auto now = std::chrono::steady_clock::now();
  if (!Fresh(now)) {
    // An upload renamed into the folder but not settled yet counts twice until the next count:
    // the quota errs on the side of refusing.
    kept_ = CountFolder(app_dir_);
    counted_at_ = now;
  }
  if (kept_ + in_flight_ + bytes > quota_bytes) return false;
  in_flight_ += bytes;
  return true;
}

void FileUsage::Settle(std::uint64_t bytes, bool kept) {
  std::lock_guard lock(mutex_);
  in_flight_ -= std::min(in_flight_, bytes);
  if (kept) kept_ += bytes;
}

std::optional<bool> FileUsage::Fits(std::uint64_t bytes, std::uint64_t quota_bytes) const {
  std::lock_guard lock(mutex_);
  if (!Fresh(std::chrono::steady_clock::now())) return std::nullopt;
  return kept_ + in_flight_ + bytes <= quota_bytes;
}

void FileUsage::Forget() {
  std::lock_guard lock(mutex_);
  counted_at_.reset();
}

}  // namespace crmd::files
