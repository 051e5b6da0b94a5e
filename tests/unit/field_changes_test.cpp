// write::CollectChanges: a body that adds no field copies no schema; new fields go to a copy of the
// class, and a later field of the same body is checked against that copy (a name differing only in
// case from a field the body just added is refused).
#include <gtest/gtest.h>

#include <optional>

#include "util/errors.hpp"
#include "util/json.hpp"
#include "write/field_changes.hpp"

namespace crmd::write {
namespace {

json::object Body(std::string_view text) { return ParseJson(text).value().get_object(); }

class CollectChangesTest : public ::testing::Test {
 protected:
  CollectChangesTest() {
    cls_.fields.emplace_back("Name", schema::FieldDef{schema::FieldType::kString, {}});
    master_.principal = auth::Principal::kMaster;
  }
  schema::ClassSchema cls_ = schema::ClassSchema::NewImplicit("Accounts");
  auth::Identity master_;
};

TEST_F(CollectChangesTest, DeclaredFieldsOnlyCopyNoSchema) {
  std::optional<schema::ClassSchema> grown;
  auto changes = CollectChanges(Body(R"({"Name":"a"})"), cls_, grown, master_, WriteKind::kCreate, {}, {});
  ASSERT_TRUE(changes.ok());
  EXPECT_FALSE(changes.value().schema_changed);
  EXPECT_FALSE(grown.has_value());
  EXPECT_EQ(changes.value().columns, std::vector<std::string>{"Name"});
}

TEST_F(CollectChangesTest, NewFieldsGoToACopyAndLaterFieldsAreCheckedAgainstIt) {
  const auto declared = cls_.fields.size();
  std::optional<schema::ClassSchema> grown;
  auto changes = CollectChanges(Body(R"({"City":"x","Score":3,"Name":"a"})"), cls_, grown, master_,
                                WriteKind::kCreate, {}, {});
  ASSERT_TRUE(changes.ok());
  EXPECT_TRUE(changes.value().schema_changed);
  ASSERT_TRUE(grown.has_value());
  EXPECT_EQ(cls_.fields.size(), declared);  // the published class is untouched
  ASSERT_NE(grown->FindField("City"), nullptr);
  EXPECT_EQ(grown->FindField("Score")->type, schema::FieldType::kNumber);
  EXPECT_EQ(changes.value().columns, (std::vector<std::string>{"City", "Score", "Name"}));

  // A field an operator creates goes to the copy too, checked against the fields added before it.
  std::optional<schema::ClassSchema> counted;
  auto increment = CollectChanges(Body(R"({"City":"x","Visits":{"__op":"Increment","amount":2}})"), cls_, counted,
                                  master_, WriteKind::kCreate, {}, {});
  ASSERT_TRUE(increment.ok());
  ASSERT_TRUE(counted.has_value());
  EXPECT_EQ(counted->FindField("Visits")->type, schema::FieldType::kNumber);
  EXPECT_NE(counted->FindField("City"), nullptr);
  EXPECT_EQ(increment.value().columns, (std::vector<std::string>{"City", "Visits"}));

  std::optional<schema::ClassSchema> again;
  auto collision = CollectChanges(Body(R"({"Region":"x","region":"y"})"), cls_, again, master_,
                                  WriteKind::kCreate, {}, {});
  ASSERT_FALSE(collision.ok());
  EXPECT_EQ(collision.error().code, errors::kInvalidKeyName);
  EXPECT_EQ(collision.error().message, "Invalid field name: region. It differs only in case from the field Region.");
}

// The keys the server owns are handled before any field check, whatever else shares their first
// letter (a field named `city` or `phone` is a field).
TEST_F(CollectChangesTest, ServerKeysAreHandledAndFieldsSharingTheirFirstLetterAreFields) {
  std::optional<schema::ClassSchema> grown;
  auto changes = CollectChanges(
      Body(R"({"createdAt":{"__type":"Date","iso":"2020-01-01T00:00:00.000Z"},"createdBy":"x","updatedBy":"y",)"
           R"("ACL":{"*":{"read":true}},"objectId":"abc123","city":"x","phone":"1","Name":"a"})"),
      cls_, grown, master_, WriteKind::kCreate, {}, {});
  ASSERT_TRUE(changes.ok());
  EXPECT_EQ(changes.value().columns, (std::vector<std::string>{"city", "phone", "Name"}));
  EXPECT_EQ(changes.value().object_id, std::optional<std::string>("abc123"));
  ASSERT_TRUE(changes.value().acl.has_value());
  EXPECT_TRUE(changes.value().acl->has_value());

  const auth::Identity anonymous;
  auto refused = CollectChanges(Body(R"({"objectId":"abc123"})"), cls_, grown, anonymous, WriteKind::kCreate, {}, {});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message, errors::ObjectIdNotWritable().message);
  auto not_a_date =
      CollectChanges(Body(R"({"updatedAt":"yesterday"})"), cls_, grown, master_, WriteKind::kCreate, {}, {});
  EXPECT_FALSE(not_a_date.ok());
}

TEST_F(CollectChangesTest, KeysInAnyOrderFindTheirOwnFields) {
  cls_.fields.emplace_back("Score", schema::FieldDef{schema::FieldType::kNumber, {}});
  cls_.fields.emplace_back("IsVip", schema::FieldDef{schema::FieldType::kBoolean, {}});
  // In the class's order, out of it, and with an undeclared key between: each key finds its own
  // field wherever the previous one was found (a wrong field would refuse the value's type).
  for (const char* text : {R"({"Name":"a","Score":2,"IsVip":true})", R"({"IsVip":true,"Name":"a","Score":2})",
                           R"({"Score":2,"City":"x","Name":"a","IsVip":true})"}) {
    std::optional<schema::ClassSchema> grown;
    auto changes = CollectChanges(Body(text), cls_, grown, master_, WriteKind::kCreate, {}, {});
    ASSERT_TRUE(changes.ok()) << text << ": " << changes.error().message;
    const auto& c = changes.value();
    ASSERT_EQ(c.columns.size(), std::string_view(text).find("City") == std::string_view::npos ? 3u : 4u) << text;
    for (std::size_t i = 0; i < c.columns.size(); ++i) {
      if (c.columns[i] == "Name") {
        EXPECT_EQ(c.cells[i], storage::Cell(std::string("a"))) << text;
      } else if (c.columns[i] == "Score") {
        EXPECT_EQ(c.cells[i], storage::Cell(std::int64_t{2})) << text;
      } else if (c.columns[i] == "IsVip") {
        EXPECT_EQ(c.cells[i], storage::Cell(std::int64_t{1})) << text;
      }
    }
  }

  const std::size_t last = cls_.fields.size() - 1;  // IsVip; Score and Name before it
  std::size_t next = 0;
  EXPECT_EQ(cls_.FindField("IsVip", next), &cls_.fields[last].second);
  EXPECT_EQ(next, last + 1);
  EXPECT_EQ(cls_.FindField("Name", next), &cls_.fields[last - 2].second);
  EXPECT_EQ(next, last - 1);
  EXPECT_EQ(cls_.FindField("Score", next), &cls_.fields[last - 1].second);
  EXPECT_EQ(next, last);
  EXPECT_EQ(cls_.FindField("Missing", next), nullptr);
  EXPECT_EQ(next, last);  // a miss leaves the hint
}

}  // namespace
}  // namespace crmd::write
