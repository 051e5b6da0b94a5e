// query::GetRecord and query::ListRecords (DESIGN.md "A read", STYLE.md habit 7): one read
// pipeline applies the record ACL whoever asks: the master key reads every record, a user the ones
// their ACL grants them, the application id alone the public ones; a hidden record reads as
// missing (404 101), not as forbidden. Runs on both stores through test::TestApp, the application
// over a single-file or PostgreSQL store that the layers above storage/ see only as a RecordStore.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "query/read.hpp"
#include "test_app.hpp"
#include "util/errors.hpp"
#include "util/json.hpp"
#include "write/record_writer.hpp"
#include "write/schema_writer.hpp"

namespace crmd::query {
namespace {

namespace json = boost::json;

class ReadPipelineTest : public ::testing::TestWithParam<std::string> {
 protected:
  ReadPipelineTest() {
    auto ctx = store_.Master();
    // A class the keys make is closed to everyone else (Gates::closed_new_classes): opened for
    // reading, so that the record ACL alone decides.
    const json::object everyone{{"*", true}};
    auto made = write::CreateSchema(
        ctx, "Leads",
        json::object{{"classLevelPermissions", json::object{{"get", everyone}, {"find", everyone}, {"count", everyone}}}});
    EXPECT_TRUE(made.ok()) << made.error().message;
    public_id_ = Create(ctx, json::object{{"Name", "public"}});
    owned_id_ = Create(ctx, json::object{{"Name", "owned"},
                                         {"ACL", json::object{{"u1", json::object{{"read", true}, {"write", true}}}}}});
  }

  static std::string Create(auth::Context& ctx, json::object body) {
    auto created = write::CreateRecord(ctx, "Leads", body);
    EXPECT_TRUE(created.ok()) << created.error().message;
    return created.ok() ? std::string(created.value().at("objectId").as_string()) : std::string();
  }

  // The names ListRecords answers `ctx`, sorted: the two records are often created in the same
  // millisecond, and a tie on createdAt is broken by their random ids.
  static std::vector<std::string> Names(auth::Context& ctx) {
    ListRequest request;
    request.order = {{"createdAt", false}};
    std::string out;
    const auto status = ListRecords(ctx, "Leads", request, out);
    EXPECT_TRUE(status.ok()) << status.error().message;
    const json::value answer = ParseJson(out).value();
    std::vector<std::string> names;
    for (const auto& row : answer.at("results").as_array())
      names.emplace_back(row.at("Name").as_string());
    std::sort(names.begin(), names.end());
    return names;
  }

  test::TestApp store_{"read-pipeline", GetParam()};
  std::string public_id_, owned_id_;
};

TEST_P(ReadPipelineTest, ARecordHiddenByItsAclReadsAsMissing) {
  auto anonymous = store_.Anonymous();
  auto hidden = GetRecord(anonymous, "Leads", owned_id_, {}, std::nullopt);
  ASSERT_FALSE(hidden.ok());
  EXPECT_EQ(hidden.error().http_status, 404);
  EXPECT_EQ(hidden.error().code, errors::kObjectNotFound);

  auto owner = store_.User("u1");
  auto seen = GetRecord(owner, "Leads", owned_id_, {}, std::nullopt);
  ASSERT_TRUE(seen.ok()) << seen.error().message;
  EXPECT_EQ(seen.value().at("Name").as_string(), "owned");

  auto master = store_.Master();
  EXPECT_TRUE(GetRecord(master, "Leads", owned_id_, {}, std::nullopt).ok());
  EXPECT_TRUE(GetRecord(anonymous, "Leads", public_id_, {}, std::nullopt).ok());
}

TEST_P(ReadPipelineTest, AListHoldsOnlyTheRecordsTheCallerMayRead) {
  auto anonymous = store_.Anonymous(), other = store_.User("u2"), owner = store_.User("u1"), master = store_.Master();
  EXPECT_EQ(Names(anonymous), std::vector<std::string>{"public"});
  EXPECT_EQ(Names(other), std::vector<std::string>{"public"});
  EXPECT_EQ(Names(owner), (std::vector<std::string>{"owned", "public"}));
  EXPECT_EQ(Names(master), (std::vector<std::string>{"owned", "public"}));
}

TEST_P(ReadPipelineTest, AClassThatDoesNotExistHasNoRows) {
  auto master = store_.Master();
  std::string out;
  ASSERT_TRUE(ListRecords(master, "Nobody", ListRequest{}, out).ok());
  EXPECT_EQ(ParseJson(out).value().at("results").as_array().size(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Stores, ReadPipelineTest, test::AllStores(), test::StoreName);

}  // namespace
}  // namespace crmd::query
