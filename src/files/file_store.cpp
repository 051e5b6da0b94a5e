#include "files/file_store.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <system_error>

#include "files/file_names.hpp"

namespace crmd::files {

namespace fs = std::filesystem;

namespace {

void Sync(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("open " + path + ": " + std::strerror(errno));
  const int rc = ::fsync(fd);
  const int saved = errno;
  ::close(fd);
  if (rc != 0) throw std::runtime_error("fsync " + path + ": " + std::strerror(saved));
}

// Removes the file's public copy, durably; none is not an error.
void Unpublish(const std::string& app_dir, std::string_view stored_name) {
  const auto target = PublicPath(app_dir, stored_name);
  std::error_code ec;
  if (!target || !fs::remove(*target, ec)) return;
  Sync((fs::path(app_dir) / "public").string(), O_RDONLY | O_DIRECTORY);  // a crash does not bring it back
}

}  // namespace

std::optional<std::string> FilePath(const std::string& app_dir, std::string_view stored_name) {
  if (!IsStoredName(stored_name)) return std::nullopt;
  return (fs::path(app_dir) / "files" / std::string(stored_name)).string();
}

void Keep(const std::string& temp_path, const std::string& app_dir, std::string_view stored_name) {
  const auto target = FilePath(app_dir, stored_name);
  if (!target) throw std::invalid_argument("not a stored file name");
  const fs::path folder = fs::path(app_dir) / "files";
  fs::create_directories(folder);
  Sync(temp_path, O_RDONLY);  // the bytes, before a name points at them
  std::error_code ec;
  fs::rename(temp_path, *target, ec);
  if (ec) throw std::runtime_error("rename into " + folder.string() + ": " + ec.message());
  Sync(folder.string(), O_RDONLY | O_DIRECTORY);  // the name
}

bool Remove(const std::string& app_dir, std::string_view stored_name) {
  const auto path = FilePath(app_dir, stored_name);
  if (!path) return false;
  std::error_code ec;
  fs::remove(*PublicPath(app_dir, stored_name), ec);
  fs::remove(fs::path(app_dir) / "private" / std::string(stored_name), ec);
  return fs::remove(*path, ec);
}

std::optional<std::string> PublicPath(const std::string& app_dir, std::string_view stored_name) {
  if (!IsStoredName(stored_name)) return std::nullopt;
  return (fs::path(app_dir) / "public" / std::string(stored_name)).string();
}

bool Publish(const std::string& app_dir, std::string_view stored_name) {
  const auto source = FilePath(app_dir, stored_name);
  if (!source) return false;
  std::error_code ec;
  if (!fs::exists(*source, ec) || IsPrivate(app_dir, stored_name)) return false;
  const auto target = *PublicPath(app_dir, stored_name);
  const fs::path folder = fs::path(app_dir) / "public";
  if (!fs::exists(target, ec)) {
    fs::create_directories(folder, ec);
    // A hard link: the same bytes under a second name, no copy; removing either keeps the other.
    fs::create_hard_link(*source, target, ec);
    if (ec && !fs::exists(target)) return false;  // not one a racing Publish made
    Sync(folder.string(), O_RDONLY | O_DIRECTORY);  // the acknowledged address survives a crash
  }
  // Marked meanwhile: the mark's own unlink may have come before this link (see the header).
  if (IsPrivate(app_dir, stored_name)) {
    Unpublish(app_dir, stored_name);
    return false;
  }
  return true;
}

bool MarkPrivate(const std::string& app_dir, std::string_view stored_name) {
  const auto source = FilePath(app_dir, stored_name);
  std::error_code ec;
  if (!source || !fs::exists(*source, ec)) return false;
  const fs::path folder = fs::path(app_dir) / "private";
  const fs::path mark = folder / std::string(stored_name);
  if (!fs::exists(mark, ec)) {
    fs::create_directories(folder, ec);
    const int fd = ::open(mark.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) return false;
    ::close(fd);
    Sync(folder.string(), O_RDONLY | O_DIRECTORY);
  }
  // After the mark, never before: a Publish linking meanwhile then sees the mark (see the header).
  Unpublish(app_dir, stored_name);
  return true;
}

bool IsPrivate(const std::string& app_dir, std::string_view stored_name) {
  if (!IsStoredName(stored_name)) return false;
  std::error_code ec;
  return fs::exists(fs::path(app_dir) / "private" / std::string(stored_name), ec);
}

}  // namespace crmd::files
