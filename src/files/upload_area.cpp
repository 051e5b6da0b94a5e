#include "files/upload_area.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "util/ids.hpp"
#include "util/log.hpp"

namespace crmd::files {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kLockSuffix = ".lock";
// ~95 random bits: two servers never draw the same id (O_EXCL would catch it if they did).
constexpr std::size_t kIdLength = 16;
// Each lost race with another server's sweep costs one try, and such races need a start within
// microseconds of another; this many failing means the folder is broken, not busy.
constexpr int kClaimTries = 8;

// Read-only is enough to lock, so servers running as other users can still sweep this one's lock.
constexpr int kLockFileMode = 0644;

[[noreturn]] void Fail(const std::string& what, const fs::path& path, int error) {
  throw std::runtime_error(what + " " + path.string() + ": " + std::strerror(error));
}

// Whether `path` still names the file `fd` has open: a sweep that took the lock before us unlinks
// it, and a lock on an unlinked file guards nothing.
bool StillNamed(int fd, const fs::path& path) {
  struct stat held{}, named{};
  return ::fstat(fd, &held) == 0 && ::stat(path.c_str(), &named) == 0 && held.st_dev == named.st_dev &&
         held.st_ino == named.st_ino;
}

// Removes the folder of the lock file at `lock` when no process holds the lock; false when one does.
bool RemoveIfAbandoned(const fs::path& lock, const fs::path& folder) {
  const int fd = ::open(lock.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;  // gone meanwhile: its holder stopped cleanly, or another sweep took it
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return false;  // its server is running
  }
  std::error_code ignored;
  fs::remove_all(folder, ignored);
  ::unlink(lock.c_str());  // after the folder, while held (see the header)
  ::close(fd);
  return true;
}

}  // namespace

int RemoveAbandonedUploads(const std::string& root) {
  // Listed first, removed after: entries removed during a directory walk may or may not show up.
  std::vector<fs::path> entries;
  std::error_code ec;
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) entries.push_back(it->path());
  int removed = 0;
  for (const fs::path& entry : entries) {
    const std::string name = entry.filename().string();
    if (name.ends_with(kLockSuffix)) {
      removed += RemoveIfAbandoned(entry, entry.parent_path() / name.substr(0, name.size() - kLockSuffix.size()));
      continue;
    }
    // A folder beside an existing lock file is its lock's to judge; anything else has no owner.
    if (fs::exists(entry.parent_path() / (name + std::string(kLockSuffix)), ec)) continue;
    if (fs::remove_all(entry, ec) > 0) ++removed;
  }
  return removed;
}

UploadArea UploadArea::Claim(const std::string& root) {
  fs::create_directories(root);
  if (const int removed = RemoveAbandonedUploads(root); removed > 0)
    log::Info("removed the uploads of stopped servers", {{"folder", root}, {"entries", removed}});
  for (int attempt = 0; attempt < kClaimTries; ++attempt) {
    const std::string id = ids::RandomAlnum(kIdLength);
    const fs::path lock = fs::path(root) / (id + std::string(kLockSuffix));
    const int fd = ::open(lock.c_str(), O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, kLockFileMode);
    if (fd < 0) {
      if (errno == EEXIST) continue;
      Fail("cannot make", lock, errno);
    }
    // A sweep may take a lock file between its creation and this lock: then it is theirs to
    // unlink, and this id is given up.
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0 || !StillNamed(fd, lock)) {
      ::close(fd);
      continue;
    }
    const fs::path folder = fs::path(root) / id;
    if (::mkdir(folder.c_str(), 0755) != 0) {
      const int error = errno;
      ::unlink(lock.c_str());
      ::close(fd);
      Fail("cannot make", folder, error);
    }
    return UploadArea(fd, folder.string(), lock.string());
  }
  throw std::runtime_error("cannot claim a folder for uploads under " + root);
}

UploadArea::UploadArea(int lock_fd, std::string dir, std::string lock_path)
    : lock_fd_(lock_fd), dir_(std::move(dir)), lock_path_(std::move(lock_path)) {}

UploadArea::~UploadArea() { Release(); }

UploadArea::UploadArea(UploadArea&& other) noexcept
    : lock_fd_(std::exchange(other.lock_fd_, -1)),
      dir_(std::move(other.dir_)),
      lock_path_(std::move(other.lock_path_)) {}

UploadArea& UploadArea::operator=(UploadArea&& other) noexcept {
  if (this != &other) {
    Release();
    lock_fd_ = std::exchange(other.lock_fd_, -1);
    dir_ = std::move(other.dir_);
    lock_path_ = std::move(other.lock_path_);
  }
  return *this;
}

void UploadArea::Release() {
  if (lock_fd_ < 0) return;
  std::error_code ignored;
  fs::remove_all(dir_, ignored);
  ::unlink(lock_path_.c_str());  // after the folder, while held (see the header)
  ::close(lock_fd_);
  lock_fd_ = -1;
}

}  // namespace crmd::files
