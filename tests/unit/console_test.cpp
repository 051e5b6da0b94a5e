// api/console (issue 34): what /console/... answers, from the files compiled into the binary.
#include <gtest/gtest.h>

#include "api/console.hpp"
#include "api/target.hpp"

namespace crmd::api {
namespace {

Response Get(const Console& console, std::string_view target, std::string_view base = "",
             std::optional<std::string> etag = std::nullopt) {
  Request request;
  request.target = std::string(target);
  if (etag) request.headers.emplace_back("if-none-match", *etag);
  return console.Serve(request, ParseTarget(target)->segments, base);
}

std::string HeaderOf(const Response& r, std::string_view name) {
  for (const auto& [k, v] : r.headers)
    if (k == name) return v;
  return {};
}

TEST(ConsoleTest, DeepLinksAreThePageWithItsPrefixAndBaseFilledIn) {
  const Console console("parse");
  const Response root = Get(console, "/console/", "/crm");
  EXPECT_EQ(root.status, 200);
  EXPECT_NE(root.body.find("<meta name=\"crmd-prefix\" content=\"parse\">"), std::string::npos);
  EXPECT_NE(root.body.find("<base href=\"/crm/console/\">"), std::string::npos);
  const Response deep = Get(console, "/console/demo/classes/Accounts/abc", "/crm");
  EXPECT_EQ(deep.body, root.body);
  EXPECT_NE(HeaderOf(root, "Content-Security-Policy").find("script-src 'self'"), std::string::npos);
  EXPECT_NE(HeaderOf(root, "Content-Security-Policy").find("frame-ancestors 'none'"), std::string::npos);
  // A base path is escaped into the page, never markup of its own.
  EXPECT_NE(Get(console, "/console/", "/a\"><script>").body.find("/a&quot;&gt;&lt;script&gt;/console/"), std::string::npos);
}

TEST(ConsoleTest, FilesCarryAnEtagAndAMissingFileIs404NotThePage) {
  const Console console("core");
  const Response script = Get(console, "/console/app.js");
  EXPECT_EQ(script.status, 200);
  EXPECT_EQ(script.content_type, "text/javascript; charset=utf-8");
  const std::string etag = HeaderOf(script, "ETag");
  ASSERT_FALSE(etag.empty());
  const Response again = Get(console, "/console/app.js", "", etag);
  EXPECT_EQ(again.status, 304);
  EXPECT_TRUE(again.body.empty());
  EXPECT_EQ(Get(console, "/console/look.css").content_type, "text/css; charset=utf-8");
  EXPECT_EQ(Get(console, "/console/views/nothing.js").status, 404);
  EXPECT_EQ(Get(console, "/console/views/../../look.css").status, 404);  // no path but the files' own
}

}  // namespace
}  // namespace crmd::api
