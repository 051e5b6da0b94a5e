// Issue 32, "auth/ decides, write/ touches records": the named system writes of write/ (sessions,
// login counters, reset tokens, OAuth grants) on a single-file store, with auth/'s decisions.
#include <gtest/gtest.h>
#include <sodium.h>

#include <cstring>

#include "app/application.hpp"
#include "auth/login.hpp"
#include "auth/oauth.hpp"
#include "auth/password.hpp"
#include "auth/password_reset.hpp"
#include "auth/registry.hpp"
#include "auth/sessions.hpp"
#include "schema/system_classes.hpp"
#include "storage/database.hpp"
#include "storage/sqlite/sqlite_store.hpp"
#include "temp_dir.hpp"
#include "util/ids.hpp"
#include "util/time.hpp"
#include "write/login_attempt.hpp"
#include "write/oauth_grants.hpp"
#include "write/record_writer.hpp"
#include "write/reset_tokens.hpp"
#include "util/errors.hpp"
#include "write/session_writes.hpp"

namespace crmd::write {
namespace {

namespace json = boost::json;
namespace oauth = auth::oauth;

class SystemWritesTest : public ::testing::Test {
 protected:
  SystemWritesTest() {
    app_ = std::make_shared<app::Application>(
        "t", storage::OpenSqlite(dir_.File("data.db"), storage::Durability::kFull, 2), dir_.path().string(), settings_,
        nullptr);
    auto ctx = Master();
    auto created = CreateRecord(ctx, "_User", json::object{{"username", "ann"}, {"password", "Secret123"}, {"email", "ann@example.com"}});
    EXPECT_TRUE(created.ok());
    user_id_ = std::string(created.value().at("objectId").as_string());
  }

  auth::Context Master() {
    auth::Context ctx;
    ctx.app = app_;
    ctx.identity.principal = auth::Principal::kMaster;
    return ctx;
  }
  const schema::ClassSchema& Users() { return *app_->schema()->Find("_User"); }
  storage::Row UserRow() { return *app_->db().Get(Users(), user_id_); }
  // What auth::CheckPassword finds for ann when the password is right (`matches`) or wrong.
  auth::PasswordCheck Check(bool matches) {
    return auth::PasswordCheck{"ann", user_id_, storage::TextOf(Users(), UserRow(), schema::kHashedPassword), matches,
                               std::nullopt};
  }
  std::size_t SessionRows() {
    schema::Query q;
    q.where = schema::FieldEquals("user", user_id_);
    q.limit = -1;
    std::size_t n = 0;
    app_->db().Find(*app_->schema()->Find("_Session"), q, [&](storage::Row&) { return ++n, true; });
    return n;
  }

  test::TempDir dir_{"system-writes"};  // before app_: removed after the store is closed
  app::Settings settings_;
  std::shared_ptr<app::Application> app_;
  std::string user_id_;
};

TEST_F(SystemWritesTest, EightFailuresLockTheLoginAndTheCountCommitsWithEachRefusal) {
  auto ctx = Master();
  for (int i = 1; i < auth::kMaxFailedLogins; ++i) {
    auto refused = RecordLogin(ctx, Check(false));
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().message, errors::InvalidLogin().message);
    EXPECT_EQ(std::get<std::int64_t>(storage::CellOf(Users(), UserRow(), schema::kFailedLogins)), i);
  }
  auto locked = RecordLogin(ctx, Check(false));
  ASSERT_FALSE(locked.ok());
  EXPECT_EQ(locked.error().message, errors::AccountLocked(settings_.lockout.count()).message);
  EXPECT_GT(storage::TextOf(Users(), UserRow(), schema::kLockoutUntil), timeutil::NowIso());
  // Locked: even the right password is refused, and writes nothing.
  EXPECT_FALSE(RecordLogin(ctx, Check(true)).ok());
  EXPECT_EQ(SessionRows(), 0u);
}

TEST_F(SystemWritesTest, ASuccessClearsTheCountAndOpensASessionThatResolves) {
  auto ctx = Master();
  ASSERT_FALSE(RecordLogin(ctx, Check(false)).ok());
  auto login = RecordLogin(ctx, Check(true));
  ASSERT_TRUE(login.ok());
  EXPECT_EQ(login.value().at(schema::kFailedLogins).as_int64(), 1);
  EXPECT_EQ(std::get<std::int64_t>(storage::CellOf(Users(), UserRow(), schema::kFailedLogins)), 0);
  EXPECT_FALSE(storage::TextOf(Users(), UserRow(), "last_success_login").empty());
  auto identity = auth::ResolveSession(*app_, login.value().at("sessionToken").as_string());
  ASSERT_TRUE(identity.ok());
  EXPECT_EQ(identity.value().user_id, user_id_);
  // Without a session: a sign-in that hands out an OAuth code.
  auto bare = RecordLogin(ctx, Check(true), /*open_session=*/false);
  ASSERT_TRUE(bare.ok());
  EXPECT_FALSE(bare.value().contains("sessionToken"));
  EXPECT_EQ(SessionRows(), 1u);
  EXPECT_TRUE(DeleteSession(ctx, identity.value().session_id));
  EXPECT_FALSE(DeleteSession(ctx, identity.value().session_id));
  EXPECT_EQ(SessionRows(), 0u);
}

TEST_F(SystemWritesTest, ALoginThatVerifiedAnOldPasswordIsRefused) {
  auto ctx = Master();
  auth::PasswordCheck stale = Check(true);
  stale.hash = auth::HashPassword("Older123");
  auto refused = RecordLogin(ctx, stale);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message, errors::InvalidLogin().message);
  EXPECT_EQ(SessionRows(), 0u);
}

TEST_F(SystemWritesTest, AResetTokenWorksOnceAndEndsEverySession) {
  auto ctx = Master();
  ASSERT_TRUE(RecordLogin(ctx, Check(true)).ok());
  ASSERT_EQ(SessionRows(), 1u);
  const std::string token_hash = ids::HashSecret("reset-token");
  const auto expires = timeutil::NowMillis() + 60'000;
  auto unknown = StoreResetToken(ctx, "nobody@example.com", token_hash, expires);
  ASSERT_TRUE(unknown.ok());
  EXPECT_FALSE(unknown.value());
  auto stored = StoreResetToken(ctx, "ann@example.com", token_hash, expires);
  ASSERT_TRUE(stored.ok());
  EXPECT_TRUE(stored.value());
  const auth::PreparedReset reset{token_hash, auth::HashPassword("Newer1234")};
  EXPECT_EQ(ConsumeResetToken(ctx, reset), auth::ResetOutcome::kDone);
  EXPECT_EQ(storage::TextOf(Users(), UserRow(), schema::kHashedPassword), reset.password_hash);
  EXPECT_EQ(SessionRows(), 0u);
  EXPECT_EQ(ConsumeResetToken(ctx, reset), auth::ResetOutcome::kInvalidToken);
}

TEST_F(SystemWritesTest, AnExpiredResetTokenChangesNothing) {
  auto ctx = Master();
  const std::string token_hash = ids::HashSecret("old-token");
  ASSERT_TRUE(StoreResetToken(ctx, "ann@example.com", token_hash, timeutil::NowMillis() - 1000).ok());
  const std::string before = storage::TextOf(Users(), UserRow(), schema::kHashedPassword);
  EXPECT_EQ(ConsumeResetToken(ctx, {token_hash, auth::HashPassword("Newer1234")}), auth::ResetOutcome::kInvalidToken);
  EXPECT_EQ(storage::TextOf(Users(), UserRow(), schema::kHashedPassword), before);
}

class OAuthGrantsTest : public SystemWritesTest {
 protected:
  OAuthGrantsTest() {
    auto credentials = std::make_shared<auth::AppCredentials>();
    credentials->app_id = "t";
    credentials->oauth_secret = "oauth-secret-for-tests";
    credentials_ = credentials;
  }
  auth::Context Anonymous() {
    auth::Context ctx;
    ctx.app = app_;
    ctx.credentials = credentials_;
    return ctx;
  }
  oauth::Ticket NewTicket() {
    oauth::Authorization request{client_.id, kRedirect, Challenge(kVerifier), "state", kResource};
    return oauth::Ticket{request, user_id_, ids::RandomAlnum(22), timeutil::NowMillis() / 1000 + 600};
  }
  static std::string Challenge(std::string_view verifier) {
    unsigned char digest[crypto_hash_sha256_BYTES];
    crypto_hash_sha256(digest, reinterpret_cast<const unsigned char*>(verifier.data()), verifier.size());
    std::string out(sodium_base64_ENCODED_LEN(sizeof digest, sodium_base64_VARIANT_URLSAFE_NO_PADDING), '\0');
    sodium_bin2base64(out.data(), out.size(), digest, sizeof digest, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
    out.resize(std::strlen(out.c_str()));
    return out;
  }
  std::string Code() {
    auto ctx = Anonymous();
    auto decided = DecideTicket(ctx, NewTicket(), true);
    const auto* code = std::get_if<std::optional<std::string>>(&decided);
    return code && *code ? **code : std::string();
  }
  bool AccessWorks(const std::string& token) {
    return oauth::ResolveAccessToken(*app_, *credentials_, token, kResource).has_value();
  }

  static constexpr const char* kRedirect = "http://127.0.0.1:9/cb";
  static constexpr const char* kResource = "http://localhost/mcp/t";
  static constexpr const char* kVerifier = "a-verifier-of-more-than-forty-three-characters-0123456789";
  std::shared_ptr<const auth::AppCredentials> credentials_;
  oauth::Client client_{"client-1", {kRedirect}, "client", "none"};
};

TEST_F(OAuthGrantsTest, ATicketIsDecidedOnce) {
  auto ctx = Anonymous();
  const oauth::Ticket ticket = NewTicket();
  auto first = DecideTicket(ctx, ticket, false);
  ASSERT_TRUE(std::holds_alternative<std::optional<std::string>>(first));
  EXPECT_FALSE(std::get<std::optional<std::string>>(first).has_value());
  auto second = DecideTicket(ctx, ticket, true);
  ASSERT_TRUE(std::holds_alternative<oauth::Error>(second));
  EXPECT_EQ(std::get<oauth::Error>(second).error, "invalid_request");
  EXPECT_EQ(SessionRows(), 1u);  // the spent ticket's row, and no code
}

TEST_F(OAuthGrantsTest, ACodeBuysTokensOnceAndItsReuseRevokesTheGrant) {
  auto ctx = Anonymous();
  const std::string code = Code();
  ASSERT_FALSE(code.empty());
  auto spent = SpendGrant(ctx, client_, oauth::CodeExchange(code, kVerifier, kRedirect, kResource));
  ASSERT_TRUE(std::holds_alternative<oauth::Tokens>(spent));
  const auto tokens = std::get<oauth::Tokens>(spent);
  EXPECT_TRUE(AccessWorks(tokens.access_token));
  auto again = SpendGrant(ctx, client_, oauth::CodeExchange(code, kVerifier, kRedirect, kResource));
  ASSERT_TRUE(std::holds_alternative<oauth::Error>(again));
  EXPECT_EQ(std::get<oauth::Error>(again).description, "the code was already used; the grant is revoked");
  EXPECT_FALSE(AccessWorks(tokens.access_token));
  // The refresh token went with its family.
  auto refreshed = SpendGrant(ctx, client_, oauth::RefreshExchange(tokens.refresh_token, kResource));
  EXPECT_TRUE(std::holds_alternative<oauth::Error>(refreshed));
  EXPECT_EQ(SessionRows(), 1u);  // only the spent ticket's row is left
}

TEST_F(OAuthGrantsTest, AWrongVerifierWritesNothing) {
  auto ctx = Anonymous();
  const std::string code = Code();
  const std::size_t before = SessionRows();
  auto refused = SpendGrant(ctx, client_, oauth::CodeExchange(code, std::string(kVerifier) + "x", kRedirect, kResource));
  ASSERT_TRUE(std::holds_alternative<oauth::Error>(refused));
  EXPECT_EQ(std::get<oauth::Error>(refused).error, "invalid_grant");
  EXPECT_EQ(SessionRows(), before);
  // Not spent: the right verifier still works.
  EXPECT_TRUE(std::holds_alternative<oauth::Tokens>(
      SpendGrant(ctx, client_, oauth::CodeExchange(code, kVerifier, kRedirect, kResource))));
}

TEST_F(OAuthGrantsTest, RefreshRotatesAndRevokingTheRefreshTokenEndsTheGrant) {
  auto ctx = Anonymous();
  auto first = std::get<oauth::Tokens>(SpendGrant(ctx, client_, oauth::CodeExchange(Code(), kVerifier, kRedirect, kResource)));
  auto second = SpendGrant(ctx, client_, oauth::RefreshExchange(first.refresh_token, kResource));
  ASSERT_TRUE(std::holds_alternative<oauth::Tokens>(second));
  const auto rotated = std::get<oauth::Tokens>(second);
  EXPECT_TRUE(AccessWorks(rotated.access_token));
  RevokeGrant(ctx, "not-a-token");  // ignored
  EXPECT_TRUE(AccessWorks(rotated.access_token));
  RevokeGrant(ctx, rotated.refresh_token);
  EXPECT_FALSE(AccessWorks(rotated.access_token));
  EXPECT_FALSE(AccessWorks(first.access_token));
}

TEST_F(OAuthGrantsTest, RevokingAnAccessTokenEndsItAlone) {
  auto ctx = Anonymous();
  auto tokens = std::get<oauth::Tokens>(SpendGrant(ctx, client_, oauth::CodeExchange(Code(), kVerifier, kRedirect, kResource)));
  RevokeGrant(ctx, tokens.access_token);
  EXPECT_FALSE(AccessWorks(tokens.access_token));
  EXPECT_TRUE(std::holds_alternative<oauth::Tokens>(
      SpendGrant(ctx, client_, oauth::RefreshExchange(tokens.refresh_token, kResource))));
}

}  // namespace
}  // namespace crmd::write
