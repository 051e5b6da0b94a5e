// api::Router in process: the request path of the real server without sockets. Pins the hostile
// input rows of SECURITY.md that are cheaper to test here than over HTTP.
#include <gtest/gtest.h>

#include <future>


#include "api/router.hpp"
#include "storage/registry_store.hpp"
#include "temp_dir.hpp"
#include "util/ids.hpp"
#include "util/json.hpp"
#include "util/time.hpp"

namespace crmd::api {
namespace {

namespace json = boost::json;

class RouterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ids::Init();
    auto store = storage::OpenRegistry(dir_.File("registry.db"));
    ASSERT_EQ(store->CreateApp({"app1", "one", ids::HashSecret("master-1"), timeutil::NowIso(),
                               {{"default", ids::HashSecret("api-1"), timeutil::NowIso(), {}}}, "IL", {}, {}, {}}),
              storage::RegistryChange::kDone);
    registry_ = std::make_unique<auth::Registry>(dir_.File("registry.db"));
    apps_ = std::make_unique<app::Applications>(dir_.path().string(), app::StoreOptions{});
    router_ = std::make_unique<Router>(RouterOptions{}, *registry_, *apps_);
  }

  void TearDown() override {
    router_.reset();
    apps_.reset();
    registry_.reset();
  }

  Response Call(Method method, std::string target, std::string body = {},
                std::string master = "master-1") {
    Request r;
    r.method = method;
    r.method_name = method == Method::kGet    ? "GET"
                    : method == Method::kPost ? "POST"
                    : method == Method::kPut  ? "PUT"
                                              : "DELETE";
    r.target = std::move(target);
    r.body = std::move(body);
    r.headers = {{"x-core-application-id", "app1"}};
    if (!master.empty()) r.headers.emplace_back("x-core-master-key", master);
    return router_->Handle(r);
  }

  static json::object Body(const Response& r) { return ParseJson(r.body).value().as_object(); }

  std::size_t Count(const std::string& cls) {
    auto r = Call(Method::kGet, "/core/classes/" + cls + "?limit=100000");
    return Body(r).at("results").as_array().size();
  }

  const test::TempDir dir_{"router"};
  std::unique_ptr<auth::Registry> registry_;
  std::unique_ptr<app::Applications> apps_;
  std::unique_ptr<Router> router_;
};

TEST_F(RouterTest, CreateGetUpdateDeleteRoundTrip) {
  auto created = Call(Method::kPost, "/core/classes/Accounts", R"({"Name":"Dana","Score":1})");
  ASSERT_EQ(created.status, 201) << created.body;
  std::string id(Body(created).at("objectId").as_string());
  EXPECT_EQ(id.size(), 10u);
  auto updated = Call(Method::kPut, "/core/classes/Accounts/" + id,
                      R"({"Score":{"__op":"Increment","amount":-3}})");
  ASSERT_EQ(updated.status, 200) << updated.body;
  EXPECT_EQ(Body(updated).at("Score"), json::value(-2));
  auto got = Call(Method::kGet, "/core/classes/Accounts/" + id);
  EXPECT_EQ(Body(got).at("Name"), json::value("Dana"));
  EXPECT_EQ(Call(Method::kDelete, "/core/classes/Accounts/" + id).body, "{}");
  auto gone = Call(Method::kGet, "/core/classes/Accounts/" + id);
  EXPECT_EQ(gone.status, 404);
  EXPECT_EQ(gone.body, R"({"code":101,"error":"Object not found."})");
}

// SECURITY.md, SQL injection: hostile identifiers never reach SQL as anything but refused input.
TEST_F(RouterTest, SqlInjectionCorpusInIdentifiersGivesClientErrors) {
  ASSERT_EQ(Call(Method::kPost, "/core/classes/Accounts", R"({"Name":"keep"})").status, 201);
  const std::vector<std::string> corpus = {"'", "\\", ";", "--", "\\Q..\\E", "a.b", "x\"; DROP TABLE Accounts; --",
                                           "Name\" FROM Accounts; --", "ä", "שם", "a'b"};
  for (const auto& bad : corpus) {
    json::object body{{bad, 1}};
    auto field = Call(Method::kPost, "/core/classes/Accounts", ToJson(body));
    EXPECT_EQ(field.status, 400) << bad;
    EXPECT_EQ(Body(field).at("code"), json::value(105)) << bad;

    std::string encoded;
    for (unsigned char c : bad) {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", c);
      encoded += hex;
    }
    auto cls = Call(Method::kPost, "/core/classes/" + encoded, R"({"Name":"x"})");
    EXPECT_EQ(cls.status, 400) << bad;
    EXPECT_EQ(Body(cls).at("code"), json::value(103)) << bad;

    auto order = Call(Method::kGet, "/core/classes/Accounts?order=-" + encoded);
    EXPECT_EQ(order.status, 400) << bad;
    EXPECT_EQ(Body(order).at("code"), json::value(105)) << bad;
    auto include = Call(Method::kGet, "/core/classes/Accounts?include=" + encoded);
    if (bad == "a.b") {
      EXPECT_EQ(include.status, 200) << bad;  // a well-formed path to no pointer: nothing expands
    } else {
      EXPECT_EQ(include.status, 400) << bad;
      EXPECT_EQ(Body(include).at("code"), json::value(102)) << bad;
    }
  }
  EXPECT_EQ(Count("Accounts"), 1u);
  EXPECT_TRUE(apps_->Open("app1")->store_admin().CheckIntegrity());
}

// SECURITY.md, principal confusion: an id that could pose as `role:X` or `*` is refused even
// with the master key.
TEST_F(RouterTest, PrincipalLikeObjectIdsAreRefusedEvenForMaster) {
  for (const char* id : {"role:Admin", "*", "a/b", "..", ""}) {
    json::object body{{"objectId", id}, {"username", std::string("u-") + id}, {"password", "Passw0rdX"}};
    auto r = Call(Method::kPost, "/core/classes/_User", ToJson(body));
    EXPECT_EQ(r.status, 400) << id;
    EXPECT_EQ(Body(r).at("code"), json::value(105)) << id;
  }
  auto ok = Call(Method::kPost, "/core/classes/Accounts", R"({"objectId":"MyOwnId123456"})");
  EXPECT_EQ(ok.status, 201) << ok.body;
  EXPECT_EQ(Body(ok).at("objectId"), json::value("MyOwnId123456"));
  auto dup = Call(Method::kPost, "/core/classes/Accounts", R"({"objectId":"MyOwnId123456"})");
  EXPECT_EQ(Body(dup).at("code"), json::value(137));
}

TEST_F(RouterTest, CredentialsCountOnlyUnderTheirOwnHeader) {
  Request r;
  r.method = Method::kGet;
  r.method_name = "GET";
  r.target = "/core/classes/Accounts";
  r.headers = {{"x-core-application-id", "app1"}, {"x-core-api-key", "master-1"}};
  auto misplaced = router_->Handle(r);
  EXPECT_EQ(misplaced.body, R"({"code":119,"error":"Permission denied for action find on class Accounts."})");
  r.headers = {{"x-core-application-id", "app1"}, {"x-core-api-key", "api-1"}};
  EXPECT_EQ(router_->Handle(r).status, 200);
  r.headers = {{"x-core-application-id", "nope"}, {"x-core-api-key", "api-1"}};
  auto unknown = router_->Handle(r);
  EXPECT_EQ(unknown.status, 403);
  EXPECT_EQ(unknown.body, R"({"error":"unauthorized"})");
}

TEST_F(RouterTest, ExplicitNullIsKeptAndDeleteOperatorRemovesTheValue) {
  auto created = Call(Method::kPost, "/core/classes/Notes", R"({"Title":"t","Body":"b"})");
  std::string id(Body(created).at("objectId").as_string());
  Call(Method::kPut, "/core/classes/Notes/" + id, R"({"Title":null,"Body":{"__op":"Delete"}})");
  auto got = Body(Call(Method::kGet, "/core/classes/Notes/" + id));
  ASSERT_TRUE(got.contains("Title"));
  EXPECT_TRUE(got.at("Title").is_null());
  EXPECT_FALSE(got.contains("Body"));
}

TEST_F(RouterTest, ListHonoursLimitSkipAndOrder) {
  for (int i = 0; i < 5; ++i)
    Call(Method::kPost, "/core/classes/Items", "{\"n\":" + std::to_string(i) + "}");
  auto page = Body(Call(Method::kGet, "/core/classes/Items?order=-n&limit=2&skip=1"));
  const auto& results = page.at("results").as_array();
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].as_object().at("n"), json::value(3));
  EXPECT_EQ(results[1].as_object().at("n"), json::value(2));
  EXPECT_EQ(Call(Method::kGet, "/core/classes/Items?limit=0").body, R"({"results":[]})");
  auto bad = Call(Method::kGet, "/core/classes/Items?limit=-1");
  EXPECT_EQ(bad.body, R"({"code":102,"error":"Invalid parameter for query: limit"})");
}

TEST_F(RouterTest, SchemaSurvivesReopeningTheStore) {
  auto created = Call(Method::kPost, "/core/classes/Tasks",
                      R"({"Due":{"__type":"Date","iso":"2026-11-21T10:00:00.000Z"}})");
  ASSERT_EQ(created.status, 201);
  router_.reset();
  apps_ = std::make_unique<app::Applications>(dir_.path().string(), app::StoreOptions{});
  router_ = std::make_unique<Router>(RouterOptions{}, *registry_, *apps_);
  auto mismatch = Call(Method::kPost, "/core/classes/Tasks", R"({"Due":"tomorrow"})");
  EXPECT_EQ(mismatch.body,
            R"({"code":111,"error":"schema mismatch for Tasks.Due; expected Date but got String"})");
}

// Issue 33: an MCP Create-Data of a key caller into a class of the application's own goes to
// its write queue, as the record API's create does (sharing the queue's flushes), and is answered
// as on a writer thread. A read, a system class or a caller without a key stay on the writers.
TEST_F(RouterTest, AnMcpCreateOfAKeyCallerIntoItsOwnClassGoesToTheWriteQueue) {
  ASSERT_EQ(Call(Method::kPost, "/core/classes/Tasks", R"({"Name":"first"})").status, 201);
  const auto message = [](std::string_view tool, json::object arguments) {
    return ToJson(json::object{{"jsonrpc", "2.0"}, {"id", 7}, {"method", "tools/call"},
                               {"params", json::object{{"name", tool}, {"arguments", std::move(arguments)}}}});
  };
  const auto post = [](std::string body, bool key) {
    Request r;
    r.method = Method::kPost;
    r.method_name = "POST";
    r.target = "/mcp/app1";
    r.body = std::move(body);
    r.headers = {{"content-type", "application/json"}};
    if (key) r.headers.emplace_back("x-core-master-key", "master-1");
    return r;
  };
  std::promise<Response> answered;
  std::function<void(Response)> done = [&](Response r) { answered.set_value(std::move(r)); };
  Request create = post(message("Create-Data", {{"table", "Tasks"}, {"data", json::object{{"Name", "queued"}}}}), true);
  ASSERT_TRUE(router_->QueueWrite(create, done));
  const Response r = answered.get_future().get();
  ASSERT_EQ(r.status, 200) << r.body;
  const auto result = Body(r).at("result").as_object();
  EXPECT_EQ(result.at("isError"), json::value(false));
  const auto made = ParseJson(result.at("content").as_array().at(0).at("text").as_string()).value().as_object();
  EXPECT_TRUE(made.contains("objectId") && made.contains("createdAt")) << r.body;
  EXPECT_EQ(Body(r).at("id"), json::value(7));
  EXPECT_EQ(Count("Tasks"), 2u);

  std::function<void(Response)> never = [](Response) { ADD_FAILURE() << "queued"; };
  Request read = post(message("Get-Data", {{"table", "Tasks"}}), true);
  EXPECT_FALSE(router_->QueueWrite(read, never));
  Request system = post(message("Create-Data", {{"table", "_Role"}, {"data", json::object{{"name", "r"}}}}), true);
  EXPECT_FALSE(router_->QueueWrite(system, never));
  Request keyless = post(message("Create-Data", {{"table", "Tasks"}, {"data", json::object{{"Name", "x"}}}}), false);
  EXPECT_FALSE(router_->QueueWrite(keyless, never));
}

}  // namespace
}  // namespace crmd::api
