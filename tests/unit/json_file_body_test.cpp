// api/json_file_body (issue 31 #13): Parse's JSON file is read as a stream: the credentials are
// picked out whatever their place, and base64 is decoded only on request, into a file.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "api/json_file_body.hpp"
#include "temp_dir.hpp"

namespace crmd::api {
namespace {

namespace fs = std::filesystem;

std::string Read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(JsonFileBodyTest, CredentialsAfterALargeBase64AreFoundAndNothingElseIsKept) {
  test::TempDir dir("json-file");
  std::string base64;
  for (int i = 0; i < 200'000; ++i) base64 += "QUJD";  // 600,000 bytes of "ABC"
  const std::string body = R"({"base64":")" + base64 + R"(","fileData":{"metadata":{"a":[1,2]}},"_ContentType":"text/plain",)" +
                           R"("_ApplicationId":"app1","_MasterKey":7})";
  const fs::path path = dir.path() / "body";
  std::ofstream(path, std::ios::binary) << body;
  for (const auto& [file, text] : {std::pair<std::string, std::string_view>{path.string(), {}}, {std::string(), body}}) {
    const auto members = ScanJsonFile(file, text);
    ASSERT_TRUE(members);
    EXPECT_EQ(members->strings.at("_ApplicationId"), "app1");
    EXPECT_EQ(members->strings.at("_ContentType"), "text/plain");
    EXPECT_FALSE(members->strings.contains("base64"));
    EXPECT_EQ(members->base64_strings, 1);
    EXPECT_TRUE(members->not_strings.contains("_MasterKey"));
    EXPECT_TRUE(members->not_strings.contains("fileData"));
  }
  const fs::path out = dir.path() / "decoded";
  ASSERT_TRUE(DecodeBase64Member(path.string(), {}, out.string()));
  const std::string decoded = Read(out);
  EXPECT_EQ(decoded.size(), 600'000u);
  EXPECT_EQ(decoded.substr(0, 6), "ABCABC");
  EXPECT_EQ(DecodeBase64Member(body), decoded);
}

TEST(JsonFileBodyTest, WhatIsNoJsonObjectOrNoBase64IsTold) {
  for (std::string_view text : {"[1,2]", "\"x\"", "{\"a\":1", "{} trailing", "", "{\"a\":1}{\"b\":2}"})
    EXPECT_FALSE(ScanJsonFile({}, text)) << text;
  EXPECT_FALSE(DecodeBase64Member(R"({"base64":"***"})"));
  EXPECT_FALSE(DecodeBase64Member(R"({"base64":"QQ"})"));
  EXPECT_EQ(DecodeBase64Member(R"({"base64":"QQ==","x":{"base64":"QUJD"}})"), "A") << "only the top level's";
  const auto twice = ScanJsonFile({}, R"({"base64":"QQ==","base64":"QUJD"})");
  ASSERT_TRUE(twice);
  EXPECT_EQ(twice->base64_strings, 2);
  const auto escaped = ScanJsonFile({}, R"({"_Application\u0049d":"a\/b"})");
  ASSERT_TRUE(escaped);
  EXPECT_EQ(escaped->strings.at("_ApplicationId"), "a/b");
}

TEST(JsonFileBodyTest, AValueLongerThanAnyCredentialIsNotKept) {
  const std::string body = R"({"_ApplicationId":")" + std::string(kMaxMemberBytes + 1, 'a') + R"("})";
  const auto members = ScanJsonFile({}, body);
  ASSERT_TRUE(members);
  EXPECT_FALSE(members->strings.contains("_ApplicationId"));
  EXPECT_TRUE(members->long_strings.contains("_ApplicationId"));
}

}  // namespace
}  // namespace crmd::api
