// files/upload_area (issue 33): servers sharing `--data` stream uploads into folders of their own;
// one that starts removes what stopped servers left and nothing of the running ones. flock locks
// conflict between two opens of one file in one process too, so a held area stands for a running
// server here, and a lock file nobody holds for a crashed one (the kernel dropped its lock).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <set>

#include "files/upload_area.hpp"
#include "temp_dir.hpp"

namespace crmd::files {
namespace {

namespace fs = std::filesystem;

std::set<std::string> Entries(const fs::path& folder) {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(folder)) names.insert(entry.path().filename().string());
  return names;
}

// What a server killed mid-upload leaves: its lock file, unlocked, and its folder with a part.
void LeaveCrashedServer(const fs::path& root, const std::string& id) {
  fs::create_directories(root / id);
  std::ofstream(root / (id + ".lock")) << "";
  std::ofstream(root / id / "1234-0.part") << "half an upload";
}

TEST(UploadAreaTest, Issue33_AServerStartingLeavesTheUploadsOfARunningOneAlone) {
  test::TempDir dir("upload-area");
  const fs::path root = dir.path() / "tmp" / "uploads";
  UploadArea running = UploadArea::Claim(root.string());
  ASSERT_EQ(fs::path(running.dir()).parent_path(), root);
  const fs::path part = fs::path(running.dir()) / "1-0.part";
  std::ofstream(part) << "an upload in flight";

  UploadArea starting = UploadArea::Claim(root.string());
  EXPECT_NE(starting.dir(), running.dir());
  EXPECT_TRUE(fs::exists(part)) << "the running server's upload survives another's start";
  EXPECT_EQ(RemoveAbandonedUploads(root.string()), 0);
  EXPECT_TRUE(fs::exists(part));
}

TEST(UploadAreaTest, Issue33_WhatACrashedServerLeftIsRemovedAtTheNextStart) {
  test::TempDir dir("upload-area");
  const fs::path root = dir.path() / "tmp" / "uploads";
  fs::create_directories(root);
  LeaveCrashedServer(root, "crashedAAAAAAAAA");
  LeaveCrashedServer(root, "crashedBBBBBBBBB");
  std::ofstream(root / "987-3.part") << "a part of a server before issue 33";
  fs::create_directories(root / "lockless");
  std::ofstream(root / "lockless" / "x.part") << "a folder whose lock file went";
  std::ofstream(root / "nofolder.lock") << "";  // a sweep that died between its two removals

  UploadArea area = UploadArea::Claim(root.string());
  const std::string id = fs::path(area.dir()).filename().string();
  EXPECT_EQ(Entries(root), (std::set<std::string>{id, id + ".lock"}));
  EXPECT_TRUE(fs::is_empty(area.dir()));
}

TEST(UploadAreaTest, Issue33_AServerStoppingCleanlyLeavesNothing) {
  test::TempDir dir("upload-area");
  const fs::path root = dir.path() / "tmp" / "uploads";
  std::optional<UploadArea> other = UploadArea::Claim(root.string());
  {
    UploadArea area = UploadArea::Claim(root.string());
    std::ofstream(fs::path(area.dir()) / "1-0.part") << "cut short by the stop";
    UploadArea moved = std::move(area);  // the plan moves it into place: one release, by the last owner
    EXPECT_TRUE(fs::exists(moved.dir()));
  }
  const std::string id = fs::path(other->dir()).filename().string();
  EXPECT_EQ(Entries(root), (std::set<std::string>{id, id + ".lock"}));
  other.reset();
  EXPECT_TRUE(fs::is_empty(root));
}

TEST(UploadAreaTest, Issue33_ALockFileASweepHoldsIsNotClaimed) {
  test::TempDir dir("upload-area");
  const fs::path root = dir.path() / "tmp" / "uploads";
  UploadArea area = UploadArea::Claim(root.string());
  // Another sweep holding this area's lock is what a second claim of the same file would meet:
  // flock from a second open is refused while the first holds it.
  const std::string lock = area.dir() + ".lock";
  const int fd = ::open(lock.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  EXPECT_NE(::flock(fd, LOCK_EX | LOCK_NB), 0);
  ::close(fd);
}

}  // namespace
}  // namespace crmd::files
