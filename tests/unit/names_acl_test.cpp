// schema/names and auth/acl: the allowlists that keep identifiers and principals honest.
#include <gtest/gtest.h>

#include "auth/acl.hpp"
#include "schema/names.hpp"
#include "util/json.hpp"

namespace crmd {
namespace {

TEST(NamesTest, FieldNamesAreLettersDigitsUnderscoreStartingWithALetter) {
  for (const char* ok : {"Name", "array_languages_Pointer_Languages", "a1"})
    EXPECT_TRUE(schema::IsValidFieldName(ok)) << ok;
  for (const char* bad : {"", "__proto__", "_rperm", "1a", "a.b", "a b", "x\"; DROP TABLE Accounts; --",
                          "$where", "שם", "a-b"})
    EXPECT_FALSE(schema::IsValidFieldName(bad)) << bad;
  EXPECT_FALSE(schema::IsValidFieldName(std::string(64, 'a')));
}

TEST(NamesTest, SystemClassesAreAnAllowlistNotAPrefix) {
  EXPECT_TRUE(schema::IsSystemClassName("_User"));
  EXPECT_TRUE(schema::IsSystemClassName("_Timeline"));
  EXPECT_FALSE(schema::IsSystemClassName("_Join:users:_Role"));
  EXPECT_FALSE(schema::IsSystemClassName("_crmd_schema"));
  EXPECT_FALSE(schema::IsValidUserClassName("_User"));
  EXPECT_FALSE(schema::IsValidUserClassName("Accounts; DROP TABLE x"));
}

TEST(AclTest, AcceptsPublicRoleAndUserPrincipals) {
  auto acl = auth::NormalizeAcl(
      ParseJson(R"({"*":{"read":true},"role:Sales":{"read":true,"write":true},"Ab3dEf6hIj":{"write":false}})")
          .value());
  ASSERT_TRUE(acl.ok());
  EXPECT_EQ(acl.value(),
            R"({"*":{"read":true},"role:Sales":{"read":true,"write":true},"Ab3dEf6hIj":{"write":false}})");
}

TEST(AclTest, RefusesMalformedAcls) {
  for (const char* bad : {"5", R"({"*":{"read":"yes"}})", R"({"*":true})", R"({"a b":{"read":true}})",
                          R"({"*":{"delete":true}})", R"({"role:":{"read":true}})"}) {
    auto r = auth::NormalizeAcl(ParseJson(bad).value());
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().code, 123);
    EXPECT_EQ(r.error().message, "Invalid ACL.");
  }
}

}  // namespace
}  // namespace crmd
