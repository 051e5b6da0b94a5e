// auth/password: the policy of spec §4.7, argon2id, and bcrypt hashes imported from Parse.
#include <gtest/gtest.h>

#include "auth/password.hpp"
#include "util/ids.hpp"

namespace crmd::auth {
namespace {

TEST(PasswordTest, PolicyNeedsEightCharactersALowerAnUpperAndADigit) {
  EXPECT_TRUE(MeetsPasswordPolicy("Passw0rd"));
  EXPECT_TRUE(MeetsPasswordPolicy("Äbcdef1A"));  // 8 characters, Ä counted once
  EXPECT_FALSE(MeetsPasswordPolicy("Äbcdefg1a"));  // Ä is not [A-Z], as in the spec's pattern
  for (const char* weak : {"", "Pa0", "password1", "PASSWORD1", "Password", "Pass w0"})
    EXPECT_FALSE(MeetsPasswordPolicy(weak)) << weak;
}

TEST(PasswordTest, Argon2idRoundTrips) {
  ids::Init();
  const std::string hash = HashPassword("Passw0rdX");
  EXPECT_TRUE(hash.starts_with("$argon2id$"));
  EXPECT_TRUE(VerifyPassword("Passw0rdX", hash));
  EXPECT_FALSE(VerifyPassword("Passw0rdY", hash));
  EXPECT_FALSE(NeedsRehash(hash));
}

// A hash as Parse Server stores it (bcrypt, cost 10), made with libxcrypt's crypt().
TEST(PasswordTest, BcryptHashesImportedFromParseVerifyAndAskForRehash) {
  const std::string parse_hash = "$2b$10$ParseServerSaltValue1uKJ9ajHs7wd74YyIImKv/vTqnbjsHES2";
  ASSERT_TRUE(IsImportableHash(parse_hash));
  EXPECT_TRUE(VerifyPassword("Parse1mport", parse_hash));
  EXPECT_FALSE(VerifyPassword("Parse1mporT", parse_hash));
  EXPECT_TRUE(NeedsRehash(parse_hash));
}

TEST(PasswordTest, UnknownHashFormatsNeverVerify) {
  EXPECT_FALSE(VerifyPassword("x", ""));
  EXPECT_FALSE(VerifyPassword("x", "x"));
  EXPECT_FALSE(VerifyPassword("x", "$1$md5salt$abc"));
  EXPECT_FALSE(IsImportableHash("plain-text"));
}

}  // namespace
}  // namespace crmd::auth
