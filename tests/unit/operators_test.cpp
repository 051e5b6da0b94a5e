// write/operators: spec §2.2 / §4.1 update operator rules.
#include <gtest/gtest.h>

#include "util/json.hpp"
#include "write/operators.hpp"

namespace crmd::write {
namespace {

namespace json = boost::json;
using schema::FieldDef;
using schema::FieldType;

json::value J(const char* text) { return ParseJson(text).value(); }

json::value Apply(const char* op, const char* current, FieldType type) {
  auto parsed = ParseOperator(J(op).as_object());
  EXPECT_TRUE(parsed.ok());
  auto r = ApplyOperator(parsed.value(), J(current), FieldDef{type, {}}, "T", "f");
  EXPECT_TRUE(r.ok());
  return r.value().value_or(nullptr);
}

// A queued write's body lives in an arena of its own (api/message.hpp), which is not thread-safe:
// an operator's argument, kept apart from the body, must not be allocated in it.
TEST(OperatorsTest, AnArgumentIsCopiedOutOfTheBodysArena) {
  for (const char* text : {R"({"__op":"Add","objects":[{"a":[1,2]},"x"]})", R"({"__op":"Increment","amount":2})",
                           R"({"__op":"AddRelation","objects":[{"__type":"Pointer","className":"C","objectId":"a1"}]})"}) {
    auto body = ParseJson(text, json::make_shared_resource<json::monotonic_resource>());
    ASSERT_TRUE(body.ok()) << text;
    auto op = ParseOperator(body.value().as_object());
    ASSERT_TRUE(op.ok()) << text;
    EXPECT_EQ(op.value().argument.storage().get(), json::storage_ptr().get()) << text;
  }
}

TEST(OperatorsTest, IncrementAddsIncludingNegativeAmountsAndStartsAtZero) {
  EXPECT_EQ(Apply(R"({"__op":"Increment","amount":3})", "4", FieldType::kNumber), json::value(7));
  EXPECT_EQ(Apply(R"({"__op":"Increment","amount":-5})", "4", FieldType::kNumber), json::value(-1));
  EXPECT_EQ(Apply(R"({"__op":"Increment","amount":2})", "null", FieldType::kNumber), json::value(2));
  EXPECT_EQ(Apply(R"({"__op":"Increment","amount":0.5})", "1", FieldType::kNumber), json::value(1.5));
}

TEST(OperatorsTest, AddUniqueDoesNotDuplicate) {
  EXPECT_EQ(ToJson(Apply(R"({"__op":"AddUnique","objects":["a","b"]})", R"(["a"])", FieldType::kArray)),
            R"(["a","b"])");
  EXPECT_EQ(ToJson(Apply(R"({"__op":"Add","objects":["a"]})", R"(["a"])", FieldType::kArray)),
            R"(["a","a"])");
}

TEST(OperatorsTest, RemoveRemovesEveryListedValue) {
  EXPECT_EQ(ToJson(Apply(R"({"__op":"Remove","objects":["a",1]})", R"(["a","b","a",1])",
                         FieldType::kArray)),
            R"(["b"])");
}

TEST(OperatorsTest, DeleteClearsTheValue) {
  EXPECT_TRUE(Apply(R"({"__op":"Delete"})", R"("x")", FieldType::kString).is_null());
}

TEST(OperatorsTest, BadArgumentsGiveParseMessages) {
  auto inc = ParseOperator(J(R"({"__op":"Increment","amount":"1"})").as_object());
  ASSERT_FALSE(inc.ok());
  EXPECT_EQ(inc.error().message, "incrementing must provide a number");
  auto add = ParseOperator(J(R"({"__op":"AddUnique","objects":"a"})").as_object());
  EXPECT_EQ(add.error().message, "objects to add must be an array");
  auto unknown = ParseOperator(J(R"({"__op":"Bogus"})").as_object());
  EXPECT_EQ(unknown.error().code, 108);
}

TEST(OperatorsTest, OperatorOnFieldOfAnotherTypeIsAMismatch) {
  auto op = ParseOperator(J(R"({"__op":"Increment","amount":1})").as_object()).value();
  auto r = ApplyOperator(op, J("\"x\""), FieldDef{FieldType::kString, {}}, "Accounts", "Name");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "schema mismatch for Accounts.Name; expected String but got Number");
}

}  // namespace
}  // namespace crmd::write
