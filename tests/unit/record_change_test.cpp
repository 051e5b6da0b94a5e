// Issue 36: what a write announces to the LiveQuery subscribers of every server
// (app/record_change.hpp), and the per-application opt-in (auth/gates.hpp `live-classes`).
#include <boost/json.hpp>
#include <gtest/gtest.h>

#include "app/record_change.hpp"
#include "auth/gates.hpp"

namespace crmd {
namespace {

TEST(RecordChangeTest, AnAnnouncementCarriesTheChangeWhole) {
  app::RecordChange change{"app1", "Deals", "AbCdEf1234", app::RecordChange::Kind::kUpdate, {"stage", "amount"},
                           boost::json::object{{"updatedAt", "2026-11-29T01:00:00.000Z"}, {"stage", "lead"}}, true};
  auto back = app::DecodeChange(app::EncodeChange(change, 7000));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->app_id, "app1");
  EXPECT_EQ(back->class_name, "Deals");
  EXPECT_EQ(back->object_id, "AbCdEf1234");
  EXPECT_EQ(back->kind, app::RecordChange::Kind::kUpdate);
  EXPECT_EQ(back->fields, (std::vector<std::string>{"stage", "amount"}));
  EXPECT_EQ(boost::json::serialize(back->before), R"({"updatedAt":"2026-11-29T01:00:00.000Z","stage":"lead"})");
  EXPECT_TRUE(back->schema_changed);
}

TEST(RecordChangeTest, PreviousValuesPastTheSizeAreLeftOutBeforeTheFieldNames) {
  app::RecordChange change{"app1", "Deals", "AbCdEf1234", app::RecordChange::Kind::kUpdate, {"notes"},
                           boost::json::object{{"notes", std::string(8000, 'x')}}, false};
  const std::string text = app::EncodeChange(change, 7000);
  EXPECT_LE(text.size(), 7000u);
  auto back = app::DecodeChange(text);
  ASSERT_TRUE(back.has_value());
  EXPECT_TRUE(back->before.empty());
  EXPECT_EQ(back->fields, (std::vector<std::string>{"notes"}));
}

TEST(RecordChangeTest, FieldNamesPastTheSizeAreLeftOutAndThenAllCountAsChanged) {
  app::RecordChange change{"app1", "Deals", "AbCdEf1234", app::RecordChange::Kind::kUpdate, {}, {}, false};
  for (int i = 0; i < 1000; ++i) change.fields.push_back("field" + std::to_string(i));
  const std::string text = app::EncodeChange(change, 7000);
  EXPECT_LE(text.size(), 7000u);
  auto back = app::DecodeChange(text);
  ASSERT_TRUE(back.has_value());
  EXPECT_TRUE(back->fields.empty());
}

TEST(RecordChangeTest, AnythingElseOnTheChannelIsNoChange) {
  for (const char* text : {"", "not json", "[]", "{}", R"({"a":"x","c":"C","o":"id","k":"z"})", R"({"a":1,"c":"C","o":"id","k":"c"})"})
    EXPECT_FALSE(app::DecodeChange(text).has_value()) << text;
}

TEST(LiveClassesGateTest, NoClassUntilOptedInThenTheListOrAllAndBackToNone) {
  auth::Gates gates;
  EXPECT_FALSE(gates.LiveClass("Deals"));
  ASSERT_FALSE(auth::SetGate(gates, "live-classes", "Deals,_User").has_value());
  EXPECT_TRUE(gates.LiveClass("Deals"));
  EXPECT_TRUE(gates.LiveClass("_User"));
  EXPECT_FALSE(gates.LiveClass("Tasks"));
  auto stored = auth::GatesFrom(boost::json::serialize(auth::GatesObject(gates)));
  EXPECT_TRUE(stored.LiveClass("Deals"));
  EXPECT_FALSE(stored.LiveClass("Tasks"));
  ASSERT_FALSE(auth::SetGate(gates, "live-classes", "*").has_value());
  EXPECT_TRUE(gates.LiveClass("Tasks"));
  EXPECT_EQ(auth::GatesObject(gates).at("liveClasses").as_string(), "*");
  ASSERT_FALSE(auth::SetGate(gates, "live-classes", "-").has_value());
  EXPECT_FALSE(gates.LiveClass("Tasks"));
  EXPECT_FALSE(auth::GatesObject(gates).contains("liveClasses"));
}

TEST(LiveClassesGateTest, NamesThatAreNoClassAreRefused) {
  auth::Gates gates;
  for (const char* bad : {"a b", "Deals,", "_Session", "x;drop", "role:Admin"})
    EXPECT_TRUE(auth::SetGate(gates, "live-classes", bad).has_value()) << bad;
}

}  // namespace
}  // namespace crmd
