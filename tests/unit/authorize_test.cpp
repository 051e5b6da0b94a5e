// auth::Authorize, the decision every door depends on (issue 32): every identity, under each gate,
// against the class-level permissions that matter, for every operation. The table below is the
// expected answer written out case by case; the test walks the whole product and compares.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "auth/authorize.hpp"
#include "util/errors.hpp"

namespace crmd::auth {
namespace {

namespace json = boost::json;

enum class Who { kMaster, kApiKey, kSystem, kUser, kRoleUser, kAnonymous, kRejected };
enum class Answer { kAllowed, kDenied, kCaptcha, kNeedsAuthentication };

Identity Make(Who who, const Gates& gates) {
  Identity id;
  id.gates = gates;
  switch (who) {
    case Who::kMaster: id.principal = Principal::kMaster; break;
    case Who::kApiKey: id.principal = Principal::kApiKey; break;
    case Who::kSystem: id.principal = Principal::kSystem; break;
    case Who::kUser:
      id.principal = Principal::kUser;
      id.user_id = "u1";
      break;
    case Who::kRoleUser:
      id.principal = Principal::kUser;
      id.user_id = "u2";
      id.roles = {"Agents"};
      break;
    case Who::kAnonymous: id.principal = Principal::kAnonymous; break;
    case Who::kRejected: id.principal = Principal::kRejected; break;
  }
  return id;
}

// A class whose every operation has the one rule `rule` (`{}` nobody, `{"*":true}` everyone, ...).
schema::ClassSchema ClassWith(const json::object& rule) {
  schema::ClassSchema cls;
  cls.name = "Things";
  for (const char* op : {"find", "count", "get", "create", "update", "delete", "addField"}) cls.class_level_permissions[op] = rule;
  return cls;
}

Answer AnswerOf(const Status& status) {
  if (status.ok()) return Answer::kAllowed;
  const ApiError& e = status.error();
  if (e.message == errors::CaptchaRequired().message) return Answer::kCaptcha;
  if (e.message == errors::UserNeedsAuthentication().message) return Answer::kNeedsAuthentication;
  return Answer::kDenied;
}

bool IsWrite(Operation op) {
  return op == Operation::kCreate || op == Operation::kUpdate || op == Operation::kDelete || op == Operation::kAddField;
}

const Operation kOperations[] = {Operation::kFind,   Operation::kCount,  Operation::kGet,     Operation::kCreate,
                                 Operation::kUpdate, Operation::kDelete, Operation::kAddField};
const Who kEveryone[] = {Who::kMaster, Who::kApiKey, Who::kSystem, Who::kUser, Who::kRoleUser, Who::kAnonymous, Who::kRejected};

struct Rule {
  const char* name;
  json::object rule;
};

// The expected answer, written from the spec and docs/PROFILES.md rather than from the code.
Answer Expected(Who who, bool captcha, const Rule& rule, Operation op) {
  const std::string name = rule.name;
  switch (who) {
    case Who::kMaster:
    case Who::kApiKey:
    case Who::kSystem: return Answer::kAllowed;  // spec §5.2: the Master identity
    case Who::kRejected: return Answer::kDenied;   // spec §5.2: a wrong key is 119
    default: break;
  }
  // Spec §4.1: the CAPTCHA gate comes before the permissions, even on open classes.
  if (who == Who::kAnonymous && IsWrite(op) && captcha) return Answer::kCaptcha;
  if (name == "public") return Answer::kAllowed;
  if (name == "nobody") return Answer::kDenied;
  if (name == "authenticated")
    return who == Who::kAnonymous ? Answer::kNeedsAuthentication : Answer::kAllowed;  // spec §4.7
  if (name == "role:Agents") return who == Who::kRoleUser ? Answer::kAllowed : Answer::kDenied;
  if (name == "user u1") return who == Who::kUser ? Answer::kAllowed : Answer::kDenied;
  return Answer::kDenied;
}

TEST(AuthorizeTest, EveryIdentityUnderEveryGateAgainstEveryRuleForEveryOperation) {
  const std::vector<Rule> rules = {{"nobody", json::object{}},
                                   {"public", json::object{{"*", true}}},
                                   {"authenticated", json::object{{"requiresAuthentication", true}}},
                                   {"role:Agents", json::object{{"role:Agents", true}}},
                                   {"user u1", json::object{{"u1", true}}}};
  int cases = 0;
  for (const bool captcha : {true, false}) {
    Gates gates;
    gates.captcha = captcha;
    for (const Rule& rule : rules) {
      const schema::ClassSchema cls = ClassWith(rule.rule);
      for (const Who who : kEveryone) {
        for (const Operation op : kOperations) {
          const Answer got = AnswerOf(Authorize(Make(who, gates), op, cls.name, &cls));
          EXPECT_EQ(got, Expected(who, captcha, rule, op))
              << "identity " << static_cast<int>(who) << ", captcha " << captcha << ", rule " << rule.name << ", "
              << OperationName(op);
          ++cases;
        }
      }
    }
  }
  EXPECT_EQ(cases, 2 * 5 * 7 * 7);
}

TEST(AuthorizeTest, ARuleOfFalseOrOfAnotherTypeGrantsNothing) {
  const schema::ClassSchema cls = ClassWith(json::object{{"*", false}, {"role:Agents", "yes"}, {"u1", 1}});
  for (const Who who : {Who::kUser, Who::kRoleUser, Who::kAnonymous})
    for (const Operation op : kOperations)
      EXPECT_FALSE(Authorize(Make(who, Gates::Parse()), op, cls.name, &cls).ok()) << OperationName(op);
}

TEST(AuthorizeTest, AClassThatDoesNotExistIsReadAsEmptyAndMadeOnlyByKeysUnlessTheGateIsOpen) {
  Gates closed;
  for (const Operation op : {Operation::kFind, Operation::kCount, Operation::kGet})
    EXPECT_TRUE(Authorize(Make(Who::kUser, closed), op, "Nothing", nullptr).ok());
  EXPECT_FALSE(Authorize(Make(Who::kUser, closed), Operation::kCreate, "Nothing", nullptr).ok());
  EXPECT_TRUE(Authorize(Make(Who::kApiKey, closed), Operation::kCreate, "Nothing", nullptr).ok());
  Gates open = Gates::Parse();
  EXPECT_TRUE(Authorize(Make(Who::kUser, open), Operation::kCreate, "Nothing", nullptr).ok());
  EXPECT_FALSE(Authorize(Make(Who::kUser, open), Operation::kUpdate, "Nothing", nullptr).ok());
}

TEST(AuthorizeTest, SignUpFollowsItsGateAndTheRequestLogTheMasterKeyAlone) {
  const schema::ClassSchema users = ClassWith(json::object{});
  Gates key;  // spec §4.7: sign-up needs a key
  EXPECT_FALSE(Authorize(Make(Who::kAnonymous, key), Operation::kCreate, "_User", &users).ok());
  EXPECT_TRUE(Authorize(Make(Who::kApiKey, key), Operation::kCreate, "_User", &users).ok());
  Gates open = Gates::Parse();
  EXPECT_TRUE(Authorize(Make(Who::kAnonymous, open), Operation::kCreate, "_User", &users).ok());
  EXPECT_FALSE(Authorize(Make(Who::kRejected, open), Operation::kCreate, "_User", &users).ok());
  EXPECT_FALSE(Authorize(Make(Who::kAnonymous, open), Operation::kUpdate, "_User", &users).ok());
  // Spec §5.3: `_RequestLog` answers the master key only, not an API key.
  const schema::ClassSchema log = ClassWith(json::object{{"*", true}});
  EXPECT_TRUE(Authorize(Make(Who::kMaster, key), Operation::kFind, "_RequestLog", &log).ok());
  EXPECT_TRUE(Authorize(Make(Who::kSystem, key), Operation::kFind, "_RequestLog", &log).ok());
  EXPECT_FALSE(Authorize(Make(Who::kApiKey, key), Operation::kFind, "_RequestLog", &log).ok());
  EXPECT_FALSE(Authorize(Make(Who::kUser, key), Operation::kFind, "_RequestLog", &log).ok());
}

TEST(AuthorizeTest, OnlyTheMasterIdentitySkipsRecordAcls) {
  for (const Who who : kEveryone) {
    const Identity id = Make(who, Gates{});
    EXPECT_EQ(id.SkipsAcl(), who == Who::kMaster || who == Who::kApiKey || who == Who::kSystem) << static_cast<int>(who);
  }
}

}  // namespace
}  // namespace crmd::auth
