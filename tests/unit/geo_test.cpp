// Issue 36: Parse's geo values (schema/geo_value, the codec) and the math of its geo queries
// (util/geo_math), which SQLite's crmd_geo_* functions run and PostgreSQL's SQL repeats.
#include <gtest/gtest.h>

#include "schema/codec.hpp"
#include "schema/geo_value.hpp"
#include "util/geo_math.hpp"
#include "util/json.hpp"

namespace crmd {
namespace {

namespace json = boost::json;
using geo::Point;

json::value J(const char* text) { return ParseJson(text).value(); }

TEST(GeoMathTest, DistanceIsTheGreatCircleInRadians) {
  EXPECT_DOUBLE_EQ(geo::DistanceRadians({0, 0}, {0, 0}), 0);
  EXPECT_NEAR(geo::DistanceRadians({0, 0}, {0, 90}), std::numbers::pi / 2, 1e-12);
  EXPECT_NEAR(geo::DistanceRadians({90, 0}, {-90, 0}), std::numbers::pi, 1e-12);
  // San Francisco to Sacramento: about 134 km on Parse's 6371 km earth.
  const double km = geo::DistanceRadians({37.75, -122.68}, {38.52, -121.5}) * geo::kEarthRadiusKm;
  EXPECT_NEAR(km, 134.09, 0.01);
  // Symmetric, and exact for points a few metres apart (haversine, not the law of cosines).
  EXPECT_DOUBLE_EQ(geo::DistanceRadians({10, 20}, {11, 21}), geo::DistanceRadians({11, 21}, {10, 20}));
  EXPECT_NEAR(geo::DistanceRadians({0, 0}, {0, 0.00001}) * geo::kEarthRadiusKm * 1000, 1.11, 0.01);
}

TEST(GeoMathTest, PolygonHoldsInsideAndEdgesNotOutside) {
  const std::vector<Point> square{{0, 0}, {0, 1}, {1, 1}, {1, 0}};
  EXPECT_TRUE(geo::InPolygon({0.5, 0.5}, square));
  EXPECT_FALSE(geo::InPolygon({10, 10}, square));
  EXPECT_FALSE(geo::InPolygon({1.5, 0.5}, square));
  EXPECT_TRUE(geo::InPolygon({0, 0}, square));    // a corner
  EXPECT_TRUE(geo::InPolygon({0, 0.5}, square));  // an edge
  // Every edge and corner, where an even-odd count alone answers either way.
  for (Point p : std::vector<Point>{{1, 0.5}, {0.5, 1}, {0.5, 0}, {1, 1}, {1, 0}, {0, 1}})
    EXPECT_TRUE(geo::InPolygon(p, square)) << p.latitude << "," << p.longitude;
  // Closed or open, the same polygon.
  std::vector<Point> closed = square;
  closed.push_back(square.front());
  EXPECT_TRUE(geo::InPolygon({0.5, 0.5}, closed));
  EXPECT_FALSE(geo::InPolygon({-0.5, 0.5}, closed));
  // A concave ring: the notch is outside.
  const std::vector<Point> notch{{0, 0}, {0, 4}, {4, 4}, {4, 0}, {2, 2}};
  EXPECT_FALSE(geo::InPolygon({3, 0.5}, notch));
  EXPECT_TRUE(geo::InPolygon({3, 2}, notch));
  EXPECT_TRUE(geo::InPolygon({1, 2}, notch));
  EXPECT_FALSE(geo::InPolygon({0.5, 0.5}, {{0, 0}, {1, 1}}));  // no area
}

TEST(GeoValueTest, GeoPointIsCheckedAndWrittenCanonically) {
  auto p = schema::ParseGeoPoint(J(R"({"__type":"GeoPoint","latitude":44.0,"longitude":-11})"));
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(schema::GeoPointJson(p.value()), R"({"__type":"GeoPoint","latitude":44,"longitude":-11})");
  for (const char* bad : {R"({"__type":"GeoPoint","latitude":91,"longitude":0})",
                          R"({"__type":"GeoPoint","latitude":0,"longitude":-180.5})",
                          R"({"__type":"GeoPoint","latitude":"1","longitude":0})",
                          R"({"__type":"GeoPoint","longitude":0})", R"({"latitude":0,"longitude":0})"}) {
    auto r = schema::ParseGeoPoint(J(bad));
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().code, 107) << bad;
  }
  EXPECT_EQ(schema::ParseGeoPoint(J(R"({"__type":"GeoPoint","latitude":91,"longitude":0})")).error().message,
            "invalid GeoPoint: latitude must be a number from -90 to 90");
}

TEST(GeoValueTest, PolygonIsClosedAndNeedsThreePoints) {
  auto ring = schema::ParsePolygon(J(R"({"__type":"Polygon","coordinates":[[0,0],[0,1],[1,1],[1,0]]})"));
  ASSERT_TRUE(ring.ok());
  EXPECT_EQ(schema::PolygonJson(ring.value()), R"({"__type":"Polygon","coordinates":[[0,0],[0,1],[1,1],[1,0],[0,0]]})");
  auto closed = schema::ParsePolygon(J(R"({"__type":"Polygon","coordinates":[[0,0],[0,1],[1,1],[0,0]]})"));
  ASSERT_TRUE(closed.ok());
  EXPECT_EQ(closed.value().size(), 4u);
  for (const char* bad : {R"({"__type":"Polygon","coordinates":[[0,0],[0,1]]})",
                          R"({"__type":"Polygon","coordinates":[[0,0],[0,1],[0,0]]})",
                          R"({"__type":"Polygon","coordinates":[["a"],["b"],["c"]]})",
                          R"({"__type":"Polygon","coordinates":123})", R"({"__type":"Polygon"})",
                          R"({"__type":"Polygon","coordinates":[[0,0],[0,1],[95,1]]})"}) {
    auto r = schema::ParsePolygon(J(bad));
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().code, 107) << bad;
  }
}

TEST(GeoValueTest, QueryRingTakesGeoPointsPairsOrAPolygon) {
  EXPECT_TRUE(schema::ParseRing(J(R"([[0,0],[0,1],[1,1]])"), "$polygon").ok());
  EXPECT_TRUE(schema::ParseRing(J(R"([{"__type":"GeoPoint","latitude":0,"longitude":0},
      {"__type":"GeoPoint","latitude":0,"longitude":1},{"__type":"GeoPoint","latitude":1,"longitude":1}])"),
                                "$polygon").ok());
  EXPECT_TRUE(schema::ParseRing(J(R"({"__type":"Polygon","coordinates":[[0,0],[0,1],[1,1]]})"), "$polygon").ok());
  EXPECT_EQ(schema::ParseRing(J("[]"), "$polygon").error().code, 107);
  EXPECT_EQ(schema::ParseRing(J("1234"), "$polygon").error().code, 107);
  EXPECT_EQ(schema::ParseRing(J("[1234]"), "$polygon").error().code, 107);
  // A containment test reads the whole ring for every row: 1,000 points at most (SECURITY.md).
  json::array many;
  for (int i = 0; i < 1001; ++i) many.emplace_back(json::array{i % 90, i % 180});
  auto too_many = schema::ParseRing(many, "$polygon");
  ASSERT_FALSE(too_many.ok());
  EXPECT_EQ(too_many.error().code, 107);
  EXPECT_EQ(too_many.error().message, "invalid $polygon: a polygon may have at most 1000 points");
  many.pop_back();
  EXPECT_TRUE(schema::ParseRing(many, "$polygon").ok());
}

TEST(GeoValueTest, CodecInfersStoresAndReadsBothTypes) {
  const auto point = J(R"({"__type":"GeoPoint","latitude":37.75,"longitude":-122.68})");
  auto def = schema::InferFieldType(point, "Places", "location");
  ASSERT_TRUE(def.ok() && def.value());
  EXPECT_EQ(def.value()->type, schema::FieldType::kGeoPoint);
  auto cell = schema::EncodeValue(point, *def.value(), "Places", "location");
  ASSERT_TRUE(cell.ok());
  EXPECT_EQ(ToJson(schema::DecodeCell(cell.value(), *def.value())), ToJson(point));
  // Another type's value is the usual 111.
  auto wrong = schema::EncodeValue(J(R"("here")"), *def.value(), "Places", "location");
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.error().code, 111);

  const auto polygon = J(R"({"__type":"Polygon","coordinates":[[0,0],[0,1],[1,1]]})");
  auto pdef = schema::InferFieldType(polygon, "Areas", "shape");
  ASSERT_TRUE(pdef.ok() && pdef.value());
  EXPECT_EQ(pdef.value()->type, schema::FieldType::kPolygon);
  auto pcell = schema::EncodeValue(polygon, *pdef.value(), "Areas", "shape");
  ASSERT_TRUE(pcell.ok());
  EXPECT_EQ(ToJson(schema::DecodeCell(pcell.value(), *pdef.value())),
            R"({"__type":"Polygon","coordinates":[[0,0],[0,1],[1,1],[0,0]]})");
  EXPECT_EQ(schema::TypeName(schema::FieldType::kGeoPoint), "GeoPoint");
  EXPECT_EQ(schema::ParseTypeName("Polygon"), schema::FieldType::kPolygon);
}

TEST(GeoValueTest, OneGeoPointFieldPerClass) {
  schema::ClassSchema cls;
  cls.name = "Places";
  cls.fields.emplace_back("location", schema::FieldDef{schema::FieldType::kGeoPoint, {}});
  EXPECT_TRUE(schema::CheckOneGeoPoint(cls, "shape", schema::FieldType::kPolygon).ok());
  auto second = schema::CheckOneGeoPoint(cls, "home", schema::FieldType::kGeoPoint);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.error().code, 111);
  EXPECT_EQ(second.error().message,
            "currently, only one GeoPoint field may exist in an object. Adding home when location already exists.");
}

}  // namespace
}  // namespace crmd
