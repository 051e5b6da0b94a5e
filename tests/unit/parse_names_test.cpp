// Issue 36, the pure parts of the Parse profile's gates: what a `_User` body's `authData` asks
// (write/anonymous_auth), what a dotted Increment answers (write/dotted_keys), the `$lookup` stage
// (query/lookup) and Parse's Bytes values (schema/codec).
#include <gtest/gtest.h>

#include "auth/identity.hpp"
#include "query/lookup.hpp"
#include "schema/codec.hpp"
#include "util/ids.hpp"
#include "util/json.hpp"
#include "write/anonymous_auth.hpp"
#include "write/dotted_keys.hpp"

namespace crmd {
namespace {

namespace json = boost::json;

json::object O(const char* text) { return ParseJson(text).value().as_object(); }

TEST(ParseNamesTest, AnonymousAuthDataHashesTheIdAndRefusesEveryOtherProvider) {
  auto none = write::ReadAnonymousAuth(O(R"({"username":"a"})"));
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none.value());
  auto link = write::ReadAnonymousAuth(O(R"({"authData":{"anonymous":{"id":"u-1"}}})"));
  ASSERT_TRUE(link.ok());
  ASSERT_TRUE(link.value() && link.value()->id_hash);
  EXPECT_EQ(*link.value()->id_hash, ids::HashSecret("u-1"));
  auto unlink = write::ReadAnonymousAuth(O(R"({"authData":{"anonymous":null}})"));
  ASSERT_TRUE(unlink.ok());
  ASSERT_TRUE(unlink.value());
  EXPECT_FALSE(unlink.value()->id_hash);
  const std::string long_id(write::kMaxAnonymousIdLength + 1, 'x');
  for (const std::string& body : {std::string(R"({"authData":{"facebook":{"id":"1","access_token":"t"}}})"),
                                 std::string(R"({"authData":{"anonymous":{"id":"1"},"google":{"id":"2"}}})"),
                                 std::string(R"({"authData":null})"), std::string(R"({"authData":{"anonymous":{"id":7}}})"),
                                 std::string(R"({"authData":{"anonymous":{"id":""}}})"),
                                 R"({"authData":{"anonymous":{"id":")" + long_id + R"("}}})"}) {
    auto refused = write::ReadAnonymousAuth(O(body.c_str()));
    ASSERT_FALSE(refused.ok()) << body;
    EXPECT_EQ(refused.error().code, 252) << body;
    EXPECT_EQ(refused.error().message, "This authentication method is unsupported.");
  }
}

TEST(ParseNamesTest, ADottedIncrementAnswersItsResultAtItsPath) {
  const auto sent = O(R"({"a.b.c":{"__op":"Increment","amount":5},"a.top":{"__op":"Increment","amount":1},"a.x":"set","plain":1})");
  const auto folded = O(R"({"a":{"b":{"c":20,"keep":true},"top":2,"x":"set"},"plain":1})");
  EXPECT_EQ(write::DottedIncrementResults(sent, folded), O(R"({"a":{"b":{"c":20},"top":2}})"));
}

TEST(ParseNamesTest, LookupTakesFourNamesAndIdStandsForObjectId) {
  auto lookup = query::ParseLookup(ParseJson(R"({"from":"Person","localField":"Owner","foreignField":"_id","as":"owners"})").value());
  ASSERT_TRUE(lookup.ok());
  EXPECT_EQ(lookup.value().foreign_field, "objectId");
  EXPECT_EQ(lookup.value().local_field, "Owner");
  for (const char* bad : {R"({"from":"Person","pipeline":[],"as":"x"})", R"({"from":"a b","localField":"x","foreignField":"y","as":"z"})",
                          R"({"from":"P","localField":"x","foreignField":"y","as":"a.b"})", R"("Person")"})
    EXPECT_FALSE(query::ParseLookup(ParseJson(bad).value()).ok()) << bad;
}

TEST(ParseNamesTest, BytesKeepTheirBase64AndReadBackAsWritten) {
  const schema::FieldDef bytes{schema::FieldType::kBytes, {}};
  const auto value = ParseJson(R"({"__type":"Bytes","base64":"aGk="})").value();
  auto inferred = schema::InferFieldType(value, "T", "f");
  ASSERT_TRUE(inferred.ok() && inferred.value());
  EXPECT_EQ(inferred.value()->type, schema::FieldType::kBytes);
  auto cell = schema::EncodeValue(value, bytes, "T", "f");
  ASSERT_TRUE(cell.ok());
  EXPECT_EQ(std::get<std::string>(cell.value()), "aGk=");
  EXPECT_EQ(schema::DecodeCell(cell.value(), bytes), value);
  EXPECT_FALSE(schema::EncodeValue(json::value("aGk="), bytes, "T", "f").ok());
  EXPECT_EQ(schema::TypeName(schema::FieldType::kBytes), "Bytes");
}

TEST(ParseNamesTest, AnInstallationIdNamesAPrincipalOnlyWhenItCannotReadAsAnother) {
  EXPECT_TRUE(auth::IsInstallationId("3f1c2a4e-0b7d-4c59-9e2a-1d2f3a4b5c6d"));
  for (const std::string& id : {std::string(), std::string("role:Admin"), std::string("*"), std::string("a b"),
                               std::string(auth::kMaxInstallationIdLength + 1, 'a')})
    EXPECT_FALSE(auth::IsInstallationId(id)) << id;
  auth::Identity anonymous;
  anonymous.installation_id = "abc-1";
  EXPECT_EQ(anonymous.Principals(), (std::vector<std::string>{"*", "installation:abc-1"}));
}

}  // namespace
}  // namespace crmd
