// Issue 19, spec §6.1: trigger definitions checked whole (docs/TRIGGERS.md), `{{Field}}`
// placeholders, the activation payload, and firing inside the write unit: the fired row and the
// activation commit with the write that fired them, and go with it when it rolls back.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "app/application.hpp"
#include "storage/sqlite/sqlite_store.hpp"
#include "app/write_unit.hpp"
#include "storage/database.hpp"
#include "test_app.hpp"
#include "triggers/activation.hpp"
#include "util/json.hpp"
#include "triggers/definition.hpp"
#include "triggers/placeholders.hpp"
#include "triggers/plan.hpp"
#include "triggers/runner.hpp"
#include "write/record_writer.hpp"
#include "write/schema_writer.hpp"

namespace crmd::triggers {
namespace {

namespace json = boost::json;

json::value Parse(std::string_view text) { return ParseJson(text).value(); }

TEST(PlaceholdersTest, FieldsTakeTheRecordsValues) {
  const auto record = Parse(R"({"objectId":"abcDEF1234","Name":"Dana","Score":7,"Vip":true,"Gone":null,
    "Lead":{"__type":"Pointer","className":"Leads","objectId":"L123456789"},
    "Due":{"__type":"Date","iso":"2026-11-26T10:00:00.000Z"}})").as_object();
  EXPECT_EQ(Fill("Call {{Name}} ({{objectId}})", record), "Call Dana (abcDEF1234)");
  EXPECT_EQ(Fill("{{Score}}/{{Vip}}", record), "7/true");
  EXPECT_EQ(Fill("{{Lead}} by {{Due}}", record), "L123456789 by 2026-11-26T10:00:00.000Z");
  EXPECT_EQ(Fill("[{{Missing}}][{{Gone}}]", record), "[][]");
  EXPECT_EQ(Fill("{{not a field}} {{Name", record), "{{not a field}} {{Name");
  const auto filled = FillAll(Parse(R"({"a":["{{Name}}",1],"{{Name}}":{"b":"x{{Score}}"}})"), record);
  EXPECT_EQ(ToJson(filled), R"({"a":["Dana",1],"{{Name}}":{"b":"x7"}})");  // keys stay as written
}

// Issue 31 #11: the author's markup stays; a record's value is text in an HTML body and one line
// in a header.
TEST(PlaceholdersTest, ValuesAreEscapedForTheirContextAndTheTemplateIsNot) {
  const auto record = Parse(R"({"Name":"<a href=\"https://evil.test\">Pay</a> & 'co'","Line":"a\r\nBcc: x@evil.test\u2028b\u0085c\u007fd"})").as_object();
  EXPECT_EQ(Fill("<p>{{Name}}</p>", record, Escape::kHtml),
            "<p>&lt;a href=&quot;https://evil.test&quot;&gt;Pay&lt;/a&gt; &amp; &#39;co&#39;</p>");
  EXPECT_EQ(Fill("New: {{Line}}", record, Escape::kHeader), "New: a  Bcc: x@evil.test b c d");
  EXPECT_EQ(Fill("<b>{{Name}}</b>", record), "<b><a href=\"https://evil.test\">Pay</a> & 'co'</b>");
  EXPECT_EQ(Fill("<i>{{Missing}}</i> \u00e9", record, Escape::kHtml), "<i></i> \u00e9");
}

TEST(ActivationTest, PayloadRoundTripsAndTheBlockedTextIsTheSpecs) {
  Activation a;
  a.class_name = "Leads";
  a.trigger_id = "T123456789";
  a.event = "update";
  a.object_id = "R123456789";
  a.record = json::object{{"Name", "x"}};
  a.step = 2;
  a.source = "S123456789";
  a.actions = json::array{json::object{{"_id", "A123456789"}}};
  a.done = 1;
  auto back = Activation::Parse(a.Serialize());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back.value().Serialize(), a.Serialize());
  EXPECT_FALSE(Activation::Parse("{}").ok());
  EXPECT_EQ(BlockedText("S123456789"), "blocked! trigger step is to deep -3. source trigger: S123456789");
}

// What a firing stores is written from parts already JSON text (triggers/fire.cpp): it reads
// back as the activation those parts make, its strings escaped.
TEST(ActivationTest, PayloadTextReadsBackAsTheActivationOfItsParts) {
  const std::string record = R"({"objectId":"R123456789","Name":"say \"hi\"\n","Score":7})";
  const std::string actions = R"([{"_id":"A123456789","actionType":"webhook"},{"_id":"B123456789"}])";
  const std::string text = PayloadText({"Le\"ads", "T123456789", "create", "R123456789", record, 2, "S\\1", "Root123456", actions, 1});
  auto back = Activation::Parse(text);
  ASSERT_TRUE(back.ok()) << text;
  const Activation& a = back.value();
  EXPECT_EQ(a.class_name, "Le\"ads");
  EXPECT_EQ(a.trigger_id, "T123456789");
  EXPECT_EQ(a.event, "create");
  EXPECT_EQ(a.object_id, "R123456789");
  EXPECT_EQ(json::value(a.record), Parse(record));
  EXPECT_EQ(a.step, 2);
  EXPECT_EQ(a.source, "S\\1");
  EXPECT_EQ(a.root, "Root123456");
  EXPECT_EQ(json::value(a.actions), Parse(actions));
  EXPECT_EQ(a.done, 1u);
  EXPECT_EQ(Activation::Parse(a.Serialize()).value().Serialize(), a.Serialize());
  // No root: none is written (an activation from before issue 31 reads the same).
  EXPECT_EQ(PayloadText({"Leads", "T", "create", "R", "{}", 1, "S", "", "[]", 0}).find("root"), std::string::npos);
}

// A trigger's actions are split into activations once per snapshot: those that run at once
// together and in order, each queued function call alone on the function queue.
TEST(PlanTest, ActionsAreSplitIntoTheLanesTheyRunIn) {
  schema::ClassSchema leads;
  leads.name = "Leads";
  leads.fields.emplace_back("Name", schema::FieldDef{schema::FieldType::kString, {}});
  const std::string first = R"({"_id":"A123456789","actionType":"create-record","actionData":{"create-record":{"table":"Leads","data":{}}}})";
  const std::string queued = R"({"_id":"B123456789","actionType":"server-side-code","actionData":{"server-side-code":{"functionName":"f","useQueue":true}}})";
  const std::string now_code = R"({"_id":"C123456789","actionType":"server-side-code","actionData":{"server-side-code":{"functionName":"f","useQueue":false}}})";
  leads.triggers = Parse("[{\"_id\":\"T123456789\",\"event\":\"create\",\"actions\":[" + first + "," + queued + "," + now_code + "]}]").as_array();
  const auto snapshot = schema::Snapshot().With(leads);
  const auto plan = Plan::Build(*snapshot);
  const auto* triggers = plan->Find("Leads");
  ASSERT_NE(triggers, nullptr);
  ASSERT_EQ(triggers->size(), 1u);
  EXPECT_EQ(Parse(triggers->front().now_actions), Parse("[" + first + "," + now_code + "]"));
  ASSERT_EQ(triggers->front().queued_actions.size(), 1u);
  EXPECT_EQ(Parse(triggers->front().queued_actions.front()), Parse("[" + queued + "]"));
}

class DefinitionTest : public ::testing::Test {
 protected:
  DefinitionTest() {
    leads_.name = "Leads";
    leads_.fields.emplace_back("Name", schema::FieldDef{schema::FieldType::kString, {}});
    tasks_.name = "Tasks";
    snapshot_ = schema::Snapshot().With(leads_)->With(tasks_);
  }
  Result<json::array> Check(std::string_view triggers) {
    return CheckDefinitions(Parse(triggers), leads_, *snapshot_, [](std::string_view name) { return name == "deployed"; });
  }
  // The message of a refusal (400 107), or "" when the list was accepted.
  std::string Refusal(std::string_view triggers) {
    auto r = Check(triggers);
    if (r.ok()) return "";
    EXPECT_EQ(r.error().http_status, 400);
    EXPECT_EQ(r.error().code, 107);
    return r.error().message;
  }
  schema::ClassSchema leads_, tasks_;
  std::shared_ptr<const schema::Snapshot> snapshot_;
};

constexpr std::string_view kCreateTask =
    R"({"actionType":"create-record","actionData":{"create-record":{"table":"Tasks","data":{"Name":"{{Name}}"}}}})";

TEST_F(DefinitionTest, IdsAreDrawnWhenMissingAndKeptWhenSent) {
  auto r = Check(fmt::format(R"([{{"event":"save","actions":[{}]}},
                                 {{"_id":"Kept123456","event":"delete","actions":[{{"_id":"Act1234567",
                                   "actionType":"webhook","actionData":{{"webhook":{{"url":"https://example.test/h"}}}}}}]}}])",
                             kCreateTask));
  ASSERT_TRUE(r.ok()) << r.error().message;
  const auto& list = r.value();
  ASSERT_EQ(list.size(), 2u);
  const auto& first = list[0].as_object();
  EXPECT_EQ(first.at("_id").as_string().size(), 10u);
  EXPECT_EQ(first.at("active"), json::value(true));
  EXPECT_EQ(first.at("actions").as_array()[0].as_object().at("_id").as_string().size(), 10u);
  EXPECT_EQ(list[1].as_object().at("_id"), json::value("Kept123456"));
  EXPECT_EQ(list[1].as_object().at("actions").as_array()[0].as_object().at("_id"), json::value("Act1234567"));
  auto def = ParseDefinition(first);
  ASSERT_TRUE(def.ok());
  EXPECT_TRUE(def.value().FiresOn(WriteEvent::kCreate));
  EXPECT_TRUE(def.value().FiresOn(WriteEvent::kUpdate));
  EXPECT_FALSE(def.value().FiresOn(WriteEvent::kDelete));
}

TEST_F(DefinitionTest, MalformedDefinitionsAreRefusedNamingWhatIsWrong) {
  const std::string task(kCreateTask);
  EXPECT_NE(Refusal(R"([{"event":"created","actions":[]}])").find("\"created\""), std::string::npos);
  EXPECT_NE(Refusal(R"([{"event":"create","actions":[{"actionType":"sms","actionData":{"sms":{}}}]}])").find("\"sms\""),
            std::string::npos);
  EXPECT_NE(Refusal(R"([{"event":"create","conditions":[{"where":{"Name":{"$foo":1}}}],"actions":[]}])").find("$foo"),
            std::string::npos);
  EXPECT_NE(Refusal(R"([{"event":"create","actions":[{"actionType":"create-record","actionData":{"create-record":
            {"table":"Nowhere","data":{}}}}]}])").find("Nowhere"), std::string::npos);
  EXPECT_NE(Refusal(R"([{"event":"create","actions":[{"actionType":"server-side-code","actionData":{"server-side-code":
            {"functionName":"missing"}}}]}])").find("missing"), std::string::npos);
  EXPECT_NE(Refusal(R"([{"_id":"Same123456","event":"create","actions":[]},{"_id":"Same123456","event":"update","actions":[]}])")
                .find("duplicate _id Same123456"), std::string::npos);
  EXPECT_NE(Refusal(R"([{"event":"create","actions":[],"extra":1}])").find("extra"), std::string::npos);
  EXPECT_NE(Refusal(R"([{"event":"delete","actions":[{"actionType":"update-record","actionData":{"update-record":{"data":{}}}}]}])"),
            "");
  EXPECT_NE(Refusal(R"([{"event":"create","actions":[{"actionType":"webhook","actionData":{"webhook":{"url":"ftp://x.test/"}}}]}])"),
            "");
  // The second of two: the message says which.
  EXPECT_NE(Refusal("[{\"event\":\"create\",\"actions\":[" + task + "]},{\"event\":\"x\",\"actions\":[]}]").find("triggers[1]"),
            std::string::npos);
  EXPECT_EQ(Refusal(R"([{"event":"create","conditions":[{"where":{"Name":"Dana"}},{"changed":["Name"]}],"actions":[]}])"), "");
}

TEST_F(DefinitionTest, LogClassesCannotHaveTriggers) {
  schema::ClassSchema log;
  log.name = "_syslogTriggers";
  auto r = CheckDefinitions(Parse(R"([{"event":"create","actions":[]}])"), log, *snapshot_, {});
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(CheckDefinitions(Parse("[]"), log, *snapshot_, {}).ok());
}

// Firing inside the write unit: what a crash between a write and its actions would find.
class FireTest : public ::testing::Test {
 protected:
  FireTest() {
    auto ctx = Master();
    EXPECT_TRUE(write::CreateSchema(ctx, "Tasks", json::object{}).ok());
    EXPECT_TRUE(write::CreateRecord(ctx, "Leads", json::object{{"Name", "first"}}).ok());
    auto set = write::UpdateSchema(ctx, "Leads", Parse(fmt::format(R"({{"triggers":[{{"event":"create",
        "conditions":[{{"where":{{"Name":{{"$ne":"quiet"}}}}}}],"actions":[{}]}}]}})", kCreateTask)).as_object());
    EXPECT_TRUE(set.ok()) << set.error().message;
  }
  auth::Context Master() { return store_.Master(); }
  std::vector<storage::OutboxEntry> Outbox() { return app_->trigger_outbox().ReadOutbox(0, 100); }
  std::int64_t Fired() {
    const auto* log = app_->schema()->Find("_syslogTriggers");
    return log ? app_->db().Count(*log, {}) : 0;
  }

  test::TestApp store_{"fire"};
  std::shared_ptr<app::Application>& app_ = store_.app;
};

TEST_F(FireTest, AnActivationCommitsWithItsWriteAndGoesWithItsRollback) {
  auto ctx = Master();
  ASSERT_TRUE(write::CreateRecord(ctx, "Leads", json::object{{"Name", "Dana"}}).ok());
  auto stored = Outbox();
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_EQ(stored[0].lane, kLaneNow);
  auto activation = Activation::Parse(stored[0].payload);
  ASSERT_TRUE(activation.ok());
  EXPECT_EQ(activation.value().record.at("Name"), json::value("Dana"));
  EXPECT_EQ(activation.value().step, 1);
  EXPECT_EQ(activation.value().source, activation.value().trigger_id);
  EXPECT_EQ(Fired(), 1);

  // A write whose unit fails after it fired leaves neither the row nor the activation.
  auto failed = app::RunWrite(ctx, [&](app::WriteUnit&) -> Status {
    CRMD_TRY(write::CreateRecord(ctx, "Leads", json::object{{"Name", "rolled back"}}));
    return ApiError{400, 1, "later failure"};
  });
  EXPECT_FALSE(failed.ok());
  EXPECT_EQ(Outbox().size(), 1u);
  EXPECT_EQ(Fired(), 1);

  // A condition that does not hold fires nothing.
  ASSERT_TRUE(write::CreateRecord(ctx, "Leads", json::object{{"Name", "quiet"}}).ok());
  EXPECT_EQ(Outbox().size(), 1u);
  EXPECT_EQ(Fired(), 1);
}

TEST_F(FireTest, AWriteAtTheThirdLevelFiresABlockedStepAndNoActivation) {
  auto ctx = Master();
  ctx.trigger_level = 3;  // a write made by a third-level action
  ctx.trigger_id = "Third12345";
  ctx.source_trigger = "First12345";
  ASSERT_TRUE(write::CreateRecord(ctx, "Leads", json::object{{"Name", "deep"}}).ok());
  EXPECT_TRUE(Outbox().empty());
  const auto* log = app_->schema()->Find("_syslogTriggers");
  ASSERT_NE(log, nullptr);
  schema::Query q;
  q.where = schema::FieldEquals("error", std::string(BlockedText("First12345")));
  EXPECT_EQ(app_->db().Count(*log, q), 1);
}


// The runner against a real store: each activation's action runs once, also when more are fired at
// once than the runner holds in memory (the rest wait in the outbox and are read back).
class RunnerTest : public FireTest {
 protected:
  Runner::Host Host() {
    Runner::Host host;
    host.open = [this](const std::string&) { return app_; };
    host.credentials = [](const std::string&) { return nullptr; };
    // The record API's create, as the router's dispatch reaches it.
    host.dispatch = [](auth::Context& ctx, std::string_view method, const std::string& target, const json::value* body) {
      EXPECT_EQ(method, "POST");
      auto made = write::CreateRecord(ctx, target.substr(std::string_view("/classes/").size()), body->as_object());
      if (!made.ok()) return std::pair<int, std::string>{400, ToJson(json::object{{"error", made.error().message}})};
      return std::pair<int, std::string>{201, ToJson(made.value())};
    };
    host.has_pending = [](const std::string&) { return true; };
    return host;
  }
  std::int64_t Tasks() { return app_->db().Count(*app_->schema()->Find("Tasks"), {}); }
};

TEST_F(RunnerTest, MoreActivationsThanItHoldsEachRunOnce) {
  Runner::Options options;
  options.threads = 1;
  options.max_held = 3;
  options.payloads_held = 1;
  options.hold = std::chrono::milliseconds(20);  // a backlog builds while the creates come
  Runner runner(Host(), options);
  app_->SetActivations(&runner);
  auto ctx = Master();
  constexpr int kCreates = 12;
  for (int i = 0; i < kCreates; ++i) ASSERT_TRUE(write::CreateRecord(ctx, "Leads", json::object{{"Name", "n"}}).ok());
  for (int i = 0; i < 500 && (Tasks() < kCreates || !Outbox().empty()); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(Tasks(), kCreates);
  EXPECT_TRUE(Outbox().empty());
  EXPECT_GT(runner.overflowed(), 0u);
  EXPECT_LE(runner.held(), options.max_held);
  runner.Stop();
  app_->SetActivations(nullptr);
}

}  // namespace
}  // namespace crmd::triggers
