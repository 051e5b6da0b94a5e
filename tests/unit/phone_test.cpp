#include "util/phone.hpp"

#include <gtest/gtest.h>

namespace crmd::phone {
namespace {

// Spec §4.9: local and international forms of one number are one contact.
TEST(PhoneTest, LocalAndInternationalFormsOfOneNumberAreOne) {
  const std::string e164 = "+972501234567";
  for (const char* written : {"050-1234567", "0501234567", "+972 50-123-4567", "+972501234567", "(050) 123 4567",
                              "00972501234567"})
    EXPECT_EQ(Normalize(written, "IL"), e164) << written;
}

TEST(PhoneTest, TheRegionDecidesWhatALocalNumberIs) {
  EXPECT_EQ(Normalize("0501234567", "IL"), "+972501234567");
  EXPECT_EQ(Normalize("650 253 0000", "US"), "+16502530000");
  EXPECT_EQ(Normalize("+1 650 253 0000", "IL"), "+16502530000");  // a country code wins
  EXPECT_NE(Normalize("0501234567", "IL"), Normalize("0501234567", "GB"));
}

TEST(PhoneTest, WhatIsNoPhoneNumberHasNoForm) {
  for (const char* written : {"", "abc", "12", "+", "call me", "0"}) EXPECT_EQ(Normalize(written, "IL"), std::nullopt) << written;
  EXPECT_EQ(Normalize(std::string(200, '5'), "IL"), std::nullopt);
}

// Every written form of one number has one key, whatever its region; the key needs no region.
TEST(PhoneTest, KeysOfTheFormsOfOneNumberMeet) {
  for (const char* written : {"050-1234567", "+972 50-123-4567", "00972501234567", "(050) 123 4567"})
    EXPECT_EQ(Key(written), "501234567") << written;
  EXPECT_EQ(Key("(650) 253-0000"), Key("+1 650 253 0000"));
  EXPECT_EQ(Key("050-1234567 ext. 12"), "501234567");  // the extension is not the number
  EXPECT_EQ(Key("03-123456"), "03123456");               // fewer than 9 digits: all of them
  for (const char* written : {"", "12345", "abc", "+"}) EXPECT_EQ(Key(written), std::nullopt) << written;
}

TEST(PhoneTest, KnownRegions) {
  EXPECT_TRUE(IsKnownRegion("IL"));
  EXPECT_TRUE(IsKnownRegion("US"));
  EXPECT_FALSE(IsKnownRegion("ZZ"));
  EXPECT_FALSE(IsKnownRegion("israel"));
}

}  // namespace
}  // namespace crmd::phone
