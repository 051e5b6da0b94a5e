// write::PrepareApplication (issue 16): an application an older release made (no system user, a
// `_User` without this release's fields, a `_Timeline` whose createdBy/updatedBy are Pointers and
// that lacks an index column a class names) gains all of it when it is opened, in one unit; an
// up-to-date one is left alone and keeps its system user.
#include <gtest/gtest.h>

#include "app/application.hpp"
#include "storage/sqlite/sqlite_store.hpp"
#include "app/write_unit.hpp"
#include "auth/context.hpp"
#include "schema/log_classes.hpp"
#include "schema/system_classes.hpp"
#include "storage/database.hpp"
#include "temp_dir.hpp"
#include "write/prepare_application.hpp"

namespace crmd::write {
namespace {

namespace json = boost::json;

std::shared_ptr<app::Application> Open(const test::TempDir& dir, const app::Settings& settings) {
  return std::make_shared<app::Application>(
      "t", storage::OpenSqlite(dir.File("data.db"), storage::Durability::kNormal, 2), dir.path().string(), settings,
      nullptr);
}

// Rewrites the store as the previous release left it.
void MakeOld(app::Application& app) {
  auth::Context ctx;
  ctx.app = std::shared_ptr<app::Application>(&app, [](app::Application*) {});
  ctx.identity = auth::Identity::System();
  auto done = app::RunWrite(ctx, [&](app::WriteUnit& unit) -> Status {
    auto next = unit.schema();
    schema::ClassSchema users = *next->Find("_User");
    const schema::ClassSchema before = users;
    std::erase_if(users.fields, [](const auto& f) { return f.first == schema::kSystemUserFlag; });
    unit.txn().SaveClass(&before, users);
    next = next->With(std::move(users));
    schema::ClassSchema history = schema::ClassSchema::NewImplicit(std::string(schema::kTimelineClass));
    for (auto& f : schema::TimelineClass().fields)
      if (!history.FindField(f.first)) history.fields.push_back(f);
    unit.txn().SaveClass(nullptr, history);
    next = next->With(std::move(history));
    schema::ClassSchema deals = schema::ClassSchema::NewImplicit("Deals");
    deals.timeline = json::object{{"index", json::object{{"DealId", "Deals"}}}};
    unit.txn().SaveClass(nullptr, deals);
    unit.ChangeSchema(next->With(std::move(deals)));
    return {};
  }, app::WriteStart::kExclusive);
  ASSERT_TRUE(done.ok());
}

TEST(PrepareApplicationTest, AnOlderReleasesApplicationGainsTheSystemUserAndThisReleasesFields) {
  test::TempDir dir("prepare");
  app::Settings settings;
  {
    auto old = Open(dir, settings);
    MakeOld(*old);
    EXPECT_EQ(old->schema()->Find("_User")->FindField(schema::kSystemUserFlag), nullptr);
    EXPECT_EQ(old->schema()->Find("_Timeline")->FindField("createdBy")->type, schema::FieldType::kPointer);
  }
  std::string system_user;
  {
    auto app = Open(dir, settings);
    PrepareApplication(*app);
    const auto snapshot = app->schema();
    const auto& users = *snapshot->Find("_User");
    ASSERT_NE(users.FindField(schema::kSystemUserFlag), nullptr);
    const auto& history = *snapshot->Find("_Timeline");
    EXPECT_EQ(history.FindField("createdBy")->type, schema::FieldType::kString);
    EXPECT_EQ(history.FindField("updatedBy")->type, schema::FieldType::kString);
    ASSERT_NE(history.FindField("DealId"), nullptr);
    EXPECT_EQ(history.FindField("DealId")->target_class, "Deals");
    system_user = app->system_user_id();
    ASSERT_FALSE(system_user.empty());
    auto row = app->db().Get(users, system_user);
    ASSERT_TRUE(row.has_value());
    EXPECT_TRUE(schema::IsSystemUser(users, *row));
    EXPECT_EQ(storage::TextOf(users, *row, "username"), "Master");
    EXPECT_EQ(storage::TextOf(users, *row, schema::kHashedPassword), "");
    EXPECT_EQ(row->acl, std::optional<std::string>("{}"));
    // What was stored is what a reopened store loads.
    for (const auto& cls : app->db().LoadSchema()) {
      if (cls->name == "_Timeline") {
        EXPECT_EQ(cls->FindField("createdBy")->type, schema::FieldType::kString);
      }
    }
  }
  auto again = Open(dir, settings);
  PrepareApplication(*again);
  EXPECT_EQ(again->system_user_id(), system_user);  // the same user, not a second one
  schema::Query all;
  all.limit = -1;
  int flagged = 0;
  const auto& users = *again->schema()->Find("_User");
  again->db().Find(users, all, [&](storage::Row& row) { return flagged += schema::IsSystemUser(users, row), true; });
  EXPECT_EQ(flagged, 1);
}

}  // namespace
}  // namespace crmd::write
