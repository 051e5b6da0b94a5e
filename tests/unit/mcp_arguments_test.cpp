// mcp::CheckArguments (issue 21, spec §4.10): the tool schemas a client lists are the ones
// enforced, with messages a model can act on.
#include <gtest/gtest.h>

#include "mcp/arguments.hpp"

namespace crmd::mcp {
namespace {

namespace json = boost::json;

const json::object& Schema() {
  static const json::object schema = json::parse(R"({
    "type": "object",
    "properties": {
      "table": {"type": "string", "minLength": 1, "maxLength": 8},
      "limit": {"type": "integer", "minimum": 0, "maximum": 2000},
      "mode": {"enum": ["a", "b"]},
      "rows": {"type": "array", "maxItems": 2, "items": {"type": "object", "required": ["Name"]}}
    },
    "required": ["table"],
    "additionalProperties": false
  })").as_object();
  return schema;
}

std::string Check(std::string_view arguments) {
  auto bad = CheckArguments(Schema(), json::parse(arguments));
  return bad ? *bad : "";
}

TEST(McpArgumentsTest, ConformingArgumentsPass) {
  EXPECT_EQ(Check(R"({"table":"Tasks"})"), "");
  EXPECT_EQ(Check(R"({"table":"Tasks","limit":2000,"mode":"b","rows":[{"Name":1}]})"), "");
  EXPECT_EQ(Check(R"({"table":"Tasks","limit":5.0})"), "") << "an integral number is an integer";
  EXPECT_EQ(Check(R"({"table":"שלום"})"), "") << "lengths count characters, not bytes";
}

TEST(McpArgumentsTest, EachViolationIsNamedForAModel) {
  EXPECT_EQ(Check(R"({"table":"Tasks","limit":2001})"), "limit must be at most 2000");
  EXPECT_EQ(Check(R"({"table":"Tasks","limit":-1})"), "limit must be at least 0");
  EXPECT_EQ(Check(R"({"table":"Tasks","limit":2.5})"), "limit must be an integer");
  EXPECT_EQ(Check(R"({"table":"Tasks","limit":"5"})"), "limit must be an integer");
  EXPECT_EQ(Check(R"({})"), "table is required");
  EXPECT_EQ(Check(R"({"table":""})"), "table must have at least 1 character");
  EXPECT_EQ(Check(R"({"table":"TooLongName"})"), "table must have at most 8 characters");
  EXPECT_EQ(Check(R"({"table":"T","mode":"c"})"), R"(mode must be one of "a", "b")");
  EXPECT_EQ(Check(R"({"table":"T","extra":1})"), "extra is not an argument of this tool");
  EXPECT_EQ(Check(R"({"table":"T","rows":[{"Name":1},{}]})"), "rows[1].Name is required");
  EXPECT_EQ(Check(R"({"table":"T","rows":[{},{},{}]})"), "rows must have at most 2 items");
  EXPECT_EQ(Check(R"([1])"), "arguments must be an object");
}

}  // namespace
}  // namespace crmd::mcp
