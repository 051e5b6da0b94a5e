// Issue 35: no secret in a log line: the query strings the access log keeps lose the values of
// keys, tokens, OAuth codes and tickets, whatever their case or encoding.
#include "util/redact.hpp"

#include <gtest/gtest.h>

namespace crmd {

TEST(RedactQueryTest, SecretValuesGoTheirNamesAndOtherParametersStay) {
  EXPECT_EQ(RedactQuery("token=s3cret&where=%7B%7D&limit=10"), "token=[redacted]&where=%7B%7D&limit=10");
  EXPECT_EQ(RedactQuery("code=abc&state=xyz&client_id=c1"), "code=[redacted]&state=[redacted]&client_id=c1");
  EXPECT_EQ(RedactQuery("ticket=T&return=%2Fx"), "ticket=[redacted]&return=%2Fx");
  EXPECT_EQ(RedactQuery("X-Core-Master-Key=m&sessionToken=r%3Aab&access_token=a&refresh_token=b&client_secret=c"),
            "X-Core-Master-Key=[redacted]&sessionToken=[redacted]&access_token=[redacted]&refresh_token=[redacted]&client_secret=[redacted]");
  EXPECT_EQ(RedactQuery("password=hunter2&username=dana"), "password=[redacted]&username=dana");
  // Field lists are not secrets: a slow query's log line keeps what it asked for.
  EXPECT_EQ(RedactQuery("keys=Name,Amount&excludeKeys=Notes&apiKey=k"), "keys=Name,Amount&excludeKeys=Notes&apiKey=[redacted]");
}

TEST(RedactQueryTest, NamesAreReadAsTheServerReadsThem) {
  EXPECT_EQ(RedactQuery("TOKEN=a"), "TOKEN=[redacted]");
  EXPECT_EQ(RedactQuery("t%6Fken=a"), "t%6Fken=[redacted]");
  EXPECT_EQ(RedactQuery("%6B%65%79=a"), "%6B%65%79=[redacted]");
}

TEST(RedactQueryTest, ShapesWithoutValuesAreKeptAsTheyCame) {
  EXPECT_EQ(RedactQuery(""), "");
  EXPECT_EQ(RedactQuery("count"), "count");
  EXPECT_EQ(RedactQuery("a=1&&b=2&"), "a=1&&b=2&");
  EXPECT_EQ(RedactQuery("token="), "token=[redacted]");
  EXPECT_EQ(RedactQuery("t%6"), "t%6");
}

}  // namespace crmd
