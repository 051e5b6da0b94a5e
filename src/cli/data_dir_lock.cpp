#include "cli/data_dir_lock.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

#include "cli/file_lock.hpp"

namespace crmd::cli {

std::optional<std::string> LockDataDir(const std::string& data_dir) {
  const std::filesystem::path path = std::filesystem::path(data_dir) / kServeLockFile;
  std::error_code ec;
  std::filesystem::create_directories(data_dir, ec);
  if (ec) return "cannot use --data " + data_dir + ": " + ec.message();
  std::optional<int> fd;
  try {
    fd = LockForLife(path.string());
  } catch (const std::system_error& e) {
    return "cannot use --data " + data_dir + ": " + path.string() + ": " + e.code().message();
  }
  if (!fd) {
    std::string holder;
    std::ifstream(path) >> holder;
    return "another crmd serve is running on --data " + data_dir + (holder.empty() ? "" : " (pid " + holder + ")") +
           ": a SQLite data directory has one server; stop it first (only servers on a PostgreSQL --store share --data)";
  }
  // The holder's pid, for the message above; a failed write only loses that hint.
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(*fd, 0) == 0) {
    const ssize_t written = ::pwrite(*fd, pid.data(), pid.size(), 0);
    (void)written;
  }
  return std::nullopt;
}

}  // namespace crmd::cli
