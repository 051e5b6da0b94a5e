// A fresh directory under the system's temp directory for one test, removed with everything in it
// when the object goes, also when an ASSERT ends the test early. Declare it before whatever keeps
// files open in it, so that it is destroyed after them.
#pragma once

#include <filesystem>
#include <string>

#include "util/ids.hpp"

namespace crmd::test {

class TempDir {
 public:
  explicit TempDir(const std::string& tag) {
    ids::Init();
    path_ = std::filesystem::temp_directory_path() / ("crmd-" + tag + "-" + ids::RandomAlnum(8));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string File(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace crmd::test
