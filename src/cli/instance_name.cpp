#include "cli/instance_name.hpp"

#include <unistd.h>

#include <filesystem>

#include "cli/file_lock.hpp"
#include "util/ids.hpp"

namespace crmd::cli {

namespace {

// More servers of one host on one address and data directory than anyone runs: past it, a
// random name (not stable across restarts: its claims wait for their lease after a crash).
constexpr int kMaxSlots = 64;

// `text` as a file name's part: letters, digits, dots and dashes kept, the rest as '_'.
std::string FileNamePart(const std::string& text) {
  std::string out;
  for (char c : text.substr(0, 120)) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-';
    out.push_back(keep ? c : '_');
  }
  return out;
}

}  // namespace

std::string InstanceName(const std::string& listen, const std::string& data_dir) {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  const std::string base = std::string(host) + " " + listen + " " + std::filesystem::absolute(data_dir).string();
  const std::filesystem::path dir = std::filesystem::path(data_dir) / "tmp";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const std::string prefix = "instance-" + FileNamePart(std::string(host) + " " + listen) + "-";
  for (int slot = 0; slot < kMaxSlots; ++slot) {
    const std::string path = (dir / (prefix + std::to_string(slot) + ".lock")).string();
    try {
      if (LockForLife(path)) return slot == 0 ? base : base + " #" + std::to_string(slot);
    } catch (const std::system_error&) {
      break;
    }
  }
  return base + " " + ids::RandomAlnum(16);
}

}  // namespace crmd::cli
