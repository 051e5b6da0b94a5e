// files/file_store (issue 20, spec §3.3): an upload is kept whole under its stored name or not at
// all, and names never leave the application's folder (what a crash left: upload_area_test).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "files/file_names.hpp"
#include "files/file_store.hpp"
#include "temp_dir.hpp"

namespace crmd::files {
namespace {

namespace fs = std::filesystem;

std::string Read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(FileStoreTest, AnUploadIsKeptUnderItsStoredNameAndRemoved) {
  test::TempDir dir("file-store");
  const std::string app = (dir.path() / "apps" / "a1").string();
  const std::string uploads = (dir.path() / "tmp" / "uploads").string();
  fs::create_directories(uploads);
  const fs::path temp = fs::path(uploads) / "u1";
  std::ofstream(temp, std::ios::binary) << "the bytes";
  const std::string name = NewStoredName("quote.pdf");
  Keep(temp.string(), app, name);
  EXPECT_FALSE(fs::exists(temp));
  const auto path = FilePath(app, name);
  ASSERT_TRUE(path);
  EXPECT_EQ(fs::path(*path).parent_path(), fs::path(app) / "files");
  EXPECT_EQ(Read(*path), "the bytes");
  EXPECT_TRUE(Remove(app, name));
  EXPECT_FALSE(fs::exists(*path));
  EXPECT_FALSE(Remove(app, name));  // gone already: not an error
}

TEST(FileStoreTest, NamesNoUploadCouldHaveAnsweredReachNoPath) {
  test::TempDir dir("file-store");
  const std::string app = (dir.path() / "apps" / "a1").string();
  fs::create_directories(dir.path() / "apps" / "a1" / "files");
  std::ofstream(dir.path() / "apps" / "a1" / "data.db") << "store";
  for (const char* name : {"../data.db", "data.db", "..", "", "0123456789abcdef0123456789abcdef_../../data.db"})
    EXPECT_FALSE(FilePath(app, name)) << name;
  EXPECT_FALSE(Remove(app, "../data.db"));
  EXPECT_TRUE(fs::exists(dir.path() / "apps" / "a1" / "data.db"));
  EXPECT_THROW(Keep((dir.path() / "x").string(), app, "../data.db"), std::invalid_argument);
}

TEST(FileStoreTest, PublishAndMarkPrivateNeedTheFileAndRemoveUndoesBoth) {
  test::TempDir dir("file-store");
  const std::string app = (dir.path() / "apps" / "a1").string();
  const std::string uploads = (dir.path() / "tmp" / "uploads").string();
  fs::create_directories(uploads);
  const std::string never = NewStoredName("never.pdf");
  EXPECT_FALSE(Publish(app, never));
  EXPECT_FALSE(MarkPrivate(app, never));
  EXPECT_FALSE(IsPrivate(app, never));

  std::ofstream(fs::path(uploads) / "u1", std::ios::binary) << "bytes";
  const std::string name = NewStoredName("scan.pdf");
  Keep((fs::path(uploads) / "u1").string(), app, name);
  EXPECT_FALSE(IsPrivate(app, name));
  EXPECT_TRUE(MarkPrivate(app, name));
  EXPECT_TRUE(MarkPrivate(app, name));  // again: already marked
  EXPECT_TRUE(IsPrivate(app, name));
  EXPECT_FALSE(Publish(app, name)) << "a private file is never published";
  EXPECT_FALSE(fs::exists(*PublicPath(app, name)));
  EXPECT_FALSE(IsPrivate(app, "../files/" + name));

  std::ofstream(fs::path(uploads) / "u2", std::ios::binary) << "open";
  const std::string shown = NewStoredName("logo.png");
  Keep((fs::path(uploads) / "u2").string(), app, shown);
  EXPECT_TRUE(Publish(app, shown));
  EXPECT_TRUE(Publish(app, shown));  // again: already public
  EXPECT_EQ(Read(*PublicPath(app, shown)), "open");
  EXPECT_TRUE(Remove(app, shown));
  EXPECT_FALSE(fs::exists(*PublicPath(app, shown)));

  EXPECT_TRUE(Remove(app, name));
  EXPECT_FALSE(IsPrivate(app, name));
  EXPECT_FALSE(fs::exists(*PublicPath(app, name)));
}

// Issue 31 #7: a file attached to a File field, then to a PrivateFile field, is public no more.
TEST(FileStoreTest, MarkingAPublishedFilePrivateTakesItsPublicCopyDown) {
  test::TempDir dir("file-store");
  const std::string app = (dir.path() / "apps" / "a1").string();
  const std::string uploads = (dir.path() / "tmp" / "uploads").string();
  fs::create_directories(uploads);
  std::ofstream(fs::path(uploads) / "u1", std::ios::binary) << "scan";
  const std::string name = NewStoredName("scan.png");
  Keep((fs::path(uploads) / "u1").string(), app, name);
  ASSERT_TRUE(Publish(app, name));
  ASSERT_TRUE(fs::exists(*PublicPath(app, name)));
  EXPECT_TRUE(MarkPrivate(app, name));
  EXPECT_FALSE(fs::exists(*PublicPath(app, name)));
  EXPECT_TRUE(fs::exists(*FilePath(app, name))) << "the file itself stays";
  EXPECT_FALSE(Publish(app, name));
  EXPECT_FALSE(fs::exists(*PublicPath(app, name)));
}

// Publish and MarkPrivate racing on one name: whatever the interleaving, no public copy survives.
TEST(FileStoreTest, PublishRacingMarkPrivateNeverLeavesAPublicCopy) {
  test::TempDir dir("file-store");
  const std::string app = (dir.path() / "apps" / "a1").string();
  const std::string uploads = (dir.path() / "tmp" / "uploads").string();
  fs::create_directories(uploads);
  for (int i = 0; i < 50; ++i) {
    const fs::path temp = fs::path(uploads) / ("u" + std::to_string(i));
    std::ofstream(temp, std::ios::binary) << "bytes";
    const std::string name = NewStoredName("race.png");
    Keep(temp.string(), app, name);
    std::thread publisher([&] { Publish(app, name); });
    std::thread marker([&] { MarkPrivate(app, name); });
    publisher.join();
    marker.join();
    EXPECT_TRUE(IsPrivate(app, name));
    EXPECT_FALSE(fs::exists(*PublicPath(app, name))) << "round " << i;
  }
}

}  // namespace
}  // namespace crmd::files
