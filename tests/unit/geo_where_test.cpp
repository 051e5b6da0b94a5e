// Issue 36: Parse's geo queries from the where parser to the rows, on both stores (SQLite's
// crmd_geo_* functions and PostgreSQL's SQL must find the same rows in the same order).
#include <gtest/gtest.h>

#include "query/where_parser.hpp"
#include "schema/class_schema.hpp"
#include "schema/codec.hpp"
#include "storage/database.hpp"
#include "temp_dir.hpp"
#include "test_store.hpp"
#include "util/ids.hpp"
#include "util/json.hpp"
#include "util/time.hpp"

namespace crmd::query {
namespace {

namespace json = boost::json;
using schema::FieldDef;
using schema::FieldType;

class GeoWhereTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    ids::Init();
    db_ = test::OpenTestStore(GetParam(), dir_);
    cls_ = schema::ClassSchema::NewImplicit("Places");
    cls_.fields.emplace_back("name", FieldDef{FieldType::kString, {}});
    cls_.fields.emplace_back("location", FieldDef{FieldType::kGeoPoint, {}});
    cls_.fields.emplace_back("shape", FieldDef{FieldType::kPolygon, {}});
    {
      // Ended before the inserts: PostgreSQL's writes take turns.
      auto txn = db_->BeginWrite();
      txn->SaveClass(nullptr, cls_);
      txn->Commit();
    }
    snapshot_ = schema::Snapshot().With(cls_);
    master_.principal = auth::Principal::kMaster;
    Insert("Sacramento", R"({"__type":"GeoPoint","latitude":38.52,"longitude":-121.5})", R"([[0,0],[0,1],[1,1],[1,0]])");
    Insert("Honolulu", R"({"__type":"GeoPoint","latitude":21.35,"longitude":-157.93})", R"([[0,0],[0,2],[2,2],[2,0]])");
    Insert("San Francisco", R"({"__type":"GeoPoint","latitude":37.75,"longitude":-122.68})", R"([[10,10],[10,15],[15,15]])");
    Insert("Nowhere", nullptr, nullptr);
  }

  void Insert(const std::string& name, const char* point, const char* ring) {
    storage::Row row;
    row.object_id = ids::NewObjectId();
    row.created_at = row.updated_at = timeutil::NowIso();
    row.cells = {std::monostate{}, std::monostate{}, name, Encode(point, "location"), std::monostate{}};
    if (ring) row.cells[4] = Encode(("{\"__type\":\"Polygon\",\"coordinates\":" + std::string(ring) + "}").c_str(), "shape");
    auto txn = db_->BeginWrite();
    txn->Insert(cls_, storage::StoredColumns(cls_), row);
    txn->Commit();
  }

  storage::Cell Encode(const char* value, const char* field) {
    if (!value) return std::monostate{};
    return schema::EncodeValue(ParseJson(value).value(), *cls_.FindField(field), "Places", field).value();
  }

  Result<Expr> Parse(const std::string& where) {
    return ParseWhere(ParseJson(where).value(), *snapshot_->Find("Places"), *snapshot_, master_);
  }

  // The names of the rows `where` finds, in the store's order (nearest first for $nearSphere).
  std::vector<std::string> Names(const std::string& where, std::int64_t limit = -1, std::int64_t skip = 0) {
    auto expr = Parse(where);
    EXPECT_TRUE(expr.ok()) << where << ": " << (expr.ok() ? "" : expr.error().message);
    if (!expr.ok()) return {};
    Query q;
    q.where = std::move(expr).value();
    q.nearest = schema::NearSort(*q.where);
    q.limit = limit;
    q.skip = skip;
    std::vector<std::string> out;
    db_->Find(cls_, q, [&](const storage::Row& row) {
      out.push_back(std::get<std::string>(row.cells[2]));
      return true;
    });
    if (!q.nearest) std::sort(out.begin(), out.end());
    return out;
  }

  std::int64_t Count(const std::string& where) {
    Query q;
    q.where = Parse(where).value();  // a copy of the tree
    return db_->Count(cls_, q);
  }

  const test::TempDir dir_{"geo_where"};
  std::unique_ptr<storage::Database> db_;
  schema::ClassSchema cls_;
  std::shared_ptr<const schema::Snapshot> snapshot_;
  auth::Identity master_;
};

constexpr const char* kSf = R"({"__type":"GeoPoint","latitude":37.75,"longitude":-122.68})";

std::string Near(const std::string& extra = "") {
  return std::string(R"({"location":{"$nearSphere":)") + kSf + extra + "}}";
}

using List = std::vector<std::string>;

TEST_P(GeoWhereTest, NearSortsNearestFirstAndStopsAtTheMaximumDistance) {
  EXPECT_EQ(Names(Near()), (List{"San Francisco", "Sacramento", "Honolulu"}));
  EXPECT_EQ(Names(Near(R"(,"$maxDistanceInKilometers":150)")), (List{"San Francisco", "Sacramento"}));
  EXPECT_EQ(Names(Near(R"(,"$maxDistanceInMiles":50)")), (List{"San Francisco"}));
  EXPECT_EQ(Names(Near(R"(,"$maxDistance":3.14)")), (List{"San Francisco", "Sacramento", "Honolulu"}));
  EXPECT_EQ(Names(Near(R"(,"$maxDistanceInRadians":0.02)")), (List{"San Francisco"}));  // 127 km
  EXPECT_EQ(Names(Near(), 1, 1), (List{"Sacramento"}));
  EXPECT_EQ(Count(Near(R"(,"$maxDistanceInKilometers":150)")), 2);
}

TEST_P(GeoWhereTest, BoxPolygonAndCircleFindTheSameRowsOnBothStores) {
  const std::string sw = R"({"__type":"GeoPoint","latitude":37,"longitude":-123})";
  const std::string ne = R"({"__type":"GeoPoint","latitude":39,"longitude":-121})";
  EXPECT_EQ(Names(R"({"location":{"$within":{"$box":[)" + sw + "," + ne + "]}}}"), (List{"Sacramento", "San Francisco"}));
  EXPECT_EQ(Names(R"({"location":{"$within":{"$box":[)" + ne + "," + sw + "]}}}"), (List{"Sacramento", "San Francisco"}));
  // Sacramento is a corner of the ring: it counts as inside on both stores.
  EXPECT_EQ(Names(R"({"location":{"$geoWithin":{"$polygon":[[38.52,-121.5],[37.75,-157.93],[37.578072,-121.379914]]}}})"),
            (List{"Sacramento", "San Francisco"}));
  EXPECT_EQ(Names(R"({"location":{"$geoWithin":{"$centerSphere":[[-122.68,37.75],0.03]}}})"),
            (List{"Sacramento", "San Francisco"}));
  EXPECT_EQ(Names(R"({"location":{"$geoWithin":{"$centerSphere":[)" + std::string(kSf) + ",0.001]}}}"),
            (List{"San Francisco"}));
  EXPECT_EQ(Count(R"({"location":{"$within":{"$box":[)" + sw + "," + ne + "]}}}"), 2);
}

TEST_P(GeoWhereTest, PolygonFieldsHoldPointsEdgesIncluded) {
  EXPECT_EQ(Names(R"({"shape":{"$geoIntersects":{"$point":{"__type":"GeoPoint","latitude":0.5,"longitude":0.5}}}})"),
            (List{"Honolulu", "Sacramento"}));
  EXPECT_EQ(Names(R"({"shape":{"$geoIntersects":{"$point":{"__type":"GeoPoint","latitude":1,"longitude":1}}}})"),
            (List{"Honolulu", "Sacramento"}));
  EXPECT_EQ(Names(R"({"shape":{"$geoIntersects":{"$point":{"__type":"GeoPoint","latitude":11,"longitude":12}}}})"),
            (List{"San Francisco"}));
  // Equality compares whole values: an open ring asks for the polygon it closes to.
  EXPECT_EQ(Names(R"({"shape":{"__type":"Polygon","coordinates":[[0,0],[0,1],[1,1],[1,0]]}})"), (List{"Sacramento"}));
  EXPECT_EQ(Names(std::string(R"({"location":)") + kSf + "}"), (List{"San Francisco"}));
}

TEST_P(GeoWhereTest, BadGeoInputIsRefusedBeforeSql) {
  for (const char* where : {R"({"location":{"$geoWithin":{"$polygon":[]}}})",
                            R"({"location":{"$geoWithin":{"$polygon":1234}}})",
                            R"({"location":{"$geoWithin":{"$polygon":[1234]}}})",
                            R"({"location":{"$nearSphere":{"__type":"GeoPoint","latitude":91,"longitude":0}}})",
                            R"({"location":{"$nearSphere":{"__type":"GeoPoint","latitude":1,"longitude":0},"$maxDistance":-1}})",
                            R"({"location":{"$within":{"$box":[1,2]}}})",
                            R"({"location":{"$geoWithin":{"$centerSphere":[[0,0]]}}})",
                            R"({"shape":{"$geoIntersects":{"$point":1234}}})"}) {
    auto r = Parse(where);
    ASSERT_FALSE(r.ok()) << where;
    EXPECT_EQ(r.error().code, 107) << where;
  }
  // A geo operator on a field of another type is a bad query; on an undeclared one it finds nothing.
  EXPECT_EQ(Parse(std::string(R"({"name":{"$nearSphere":)") + kSf + "}}").error().code, 102);
  EXPECT_EQ(Names(std::string(R"({"elsewhere":{"$nearSphere":)") + kSf + "}}"), List{});
  EXPECT_EQ(Parse(R"({"location":{"$maxDistance":1}})").error().code, 107);  // bad constraint
  // A bound in no unit Parse knows is refused, not read as no bound at all.
  auto feet = Parse(std::string(R"({"location":{"$nearSphere":)") + kSf + R"(,"$maxDistanceInFeet":1}})");
  ASSERT_FALSE(feet.ok());
  EXPECT_EQ(feet.error().message, "bad constraint: $maxDistanceInFeet");
}

INSTANTIATE_TEST_SUITE_P(Stores, GeoWhereTest, test::AllStores(), test::StoreName);

}  // namespace
}  // namespace crmd::query
