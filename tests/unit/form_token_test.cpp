// auth/form_token (issue 31 #12): a form's token fits the nonce, the purpose and the application it
// was made for, and nothing else.
#include <gtest/gtest.h>

#include "auth/form_token.hpp"
#include "util/ids.hpp"

namespace crmd::auth {
namespace {

AppCredentials App(std::string id, std::string secret) {
  AppCredentials app;
  app.app_id = std::move(id);
  app.oauth_secret = std::move(secret);
  return app;
}

TEST(FormTokenTest, ATokenFitsItsNonceItsPurposeAndItsApplicationOnly) {
  ids::Init();
  const AppCredentials app = App("app1", "secret-one");
  const std::string nonce = NewFormNonce();
  ASSERT_TRUE(IsFormNonce(nonce));
  const std::string token = FormToken(app, "signin-gate", nonce);
  EXPECT_TRUE(FormTokenMatches(app, "signin-gate", nonce, token));
  EXPECT_FALSE(FormTokenMatches(app, "signin-gate", NewFormNonce(), token));
  EXPECT_FALSE(FormTokenMatches(app, "other-form", nonce, token));
  EXPECT_FALSE(FormTokenMatches(App("app2", "secret-one"), "signin-gate", nonce, token));
  EXPECT_FALSE(FormTokenMatches(App("app1", "rotated"), "signin-gate", nonce, token));
  EXPECT_FALSE(FormTokenMatches(app, "signin-gate", nonce, ""));
  EXPECT_FALSE(FormTokenMatches(app, "signin-gate", nonce, token.substr(1)));
}

TEST(FormTokenTest, NoSecretOrAMalformedNonceNeverMatches) {
  ids::Init();
  const AppCredentials none = App("app1", "");
  const std::string nonce = NewFormNonce();
  EXPECT_FALSE(FormTokenMatches(none, "signin-gate", nonce, FormToken(none, "signin-gate", nonce)));
  const AppCredentials app = App("app1", "secret-one");
  for (const std::string& bad : {std::string(), std::string("short"), std::string(32, '-'), nonce + "x"}) {
    EXPECT_FALSE(IsFormNonce(bad)) << bad;
    EXPECT_FALSE(FormTokenMatches(app, "signin-gate", bad, FormToken(app, "signin-gate", bad))) << bad;
  }
}

}  // namespace
}  // namespace crmd::auth
