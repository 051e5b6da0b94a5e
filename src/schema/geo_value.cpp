#include "schema/geo_value.hpp"

#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "util/errors.hpp"
#include "util/json.hpp"

namespace crmd::schema {

namespace json = boost::json;

namespace {

// Polygons are read whole on every containment test: a bound like every other list of a query
// (kMaxInValues) keeps one value from costing a row scan seconds.
constexpr std::size_t kMaxPolygonPoints = 1000;

std::optional<double> Number(const json::value* v) {
  if (!v || !v->is_number()) return std::nullopt;
  return v->to_number<double>();
}

Result<geo::Point> Checked(std::optional<double> latitude, std::optional<double> longitude, std::string_view what) {
  if (!latitude || !std::isfinite(*latitude) || *latitude < -90 || *latitude > 90)
    return errors::BadRequest(fmt::format("invalid {}: latitude must be a number from -90 to 90", what));
  if (!longitude || !std::isfinite(*longitude) || *longitude < -180 || *longitude > 180)
    return errors::BadRequest(fmt::format("invalid {}: longitude must be a number from -180 to 180", what));
  return geo::Point{*latitude, *longitude};
}

bool Tagged(const json::value& v, std::string_view tag) {
  const auto* t = v.is_object() ? v.get_object().if_contains("__type") : nullptr;
  return t && t->is_string() && t->get_string() == tag;
}

}  // namespace

Result<geo::Point> ParseGeoPoint(const json::value& value, std::string_view what) {
  if (!Tagged(value, "GeoPoint")) return errors::BadRequest(fmt::format("invalid {}: expected a GeoPoint", what));
  const auto& o = value.get_object();
  return Checked(Number(o.if_contains("latitude")), Number(o.if_contains("longitude")), what);
}

Result<geo::Point> ParsePointOrPair(const json::value& value, std::string_view what) {
  if (value.is_array()) {
    const auto& pair = value.get_array();
    if (pair.size() != 2) return errors::BadRequest(fmt::format("invalid {}: a point is [latitude, longitude]", what));
    return Checked(Number(&pair[0]), Number(&pair[1]), what);
  }
  return ParseGeoPoint(value, what);
}

Result<std::vector<geo::Point>> ParseRing(const json::value& points, std::string_view what) {
  const json::value* list = &points;
  if (Tagged(points, "Polygon")) list = points.get_object().if_contains("coordinates");
  if (!list || !list->is_array())
    return errors::BadRequest(fmt::format("invalid {}: expected a Polygon or an array of GeoPoints", what));
  const auto& items = list->get_array();
  if (items.size() < 3) return errors::BadRequest(fmt::format("invalid {}: a polygon needs at least 3 points", what));
  if (items.size() > kMaxPolygonPoints)
    return errors::BadRequest(fmt::format("invalid {}: a polygon may have at most {} points", what, kMaxPolygonPoints));
  std::vector<geo::Point> ring;
  ring.reserve(items.size() + 1);
  for (const auto& item : items) {
    CRMD_ASSIGN(auto p, ParsePointOrPair(item, what));
    ring.push_back(p);
  }
  return ring;
}

Result<std::vector<geo::Point>> ParsePolygon(const json::value& value) {
  if (!Tagged(value, "Polygon") || !value.get_object().if_contains("coordinates"))
    return errors::BadRequest("invalid Polygon: expected {\"__type\":\"Polygon\",\"coordinates\":[[latitude, longitude], ...]}");
  CRMD_ASSIGN(auto ring, ParseRing(value, "Polygon"));
  const auto& first = ring.front();
  if (first.latitude != ring.back().latitude || first.longitude != ring.back().longitude) ring.push_back(first);
  if (ring.size() < 4) return errors::BadRequest("invalid Polygon: a polygon needs at least 3 points");
  return ring;
}

Status CheckOneGeoPoint(const ClassSchema& cls, std::string_view adding, FieldType type) {
  if (type != FieldType::kGeoPoint) return {};
  for (const auto& [name, def] : cls.fields)
    if (def.type == FieldType::kGeoPoint && name != adding)
      return ApiError{400, errors::kIncorrectType,
                      fmt::format("currently, only one GeoPoint field may exist in an object. Adding {} when {} already exists.",
                                  adding, name)};
  return {};
}

std::string GeoPointJson(geo::Point p) {
  return fmt::format(R"({{"__type":"GeoPoint","latitude":{},"longitude":{}}})", FormatNumber(p.latitude),
                     FormatNumber(p.longitude));
}

std::string PolygonJson(const std::vector<geo::Point>& ring) {
  std::string out = R"({"__type":"Polygon","coordinates":[)";
  for (std::size_t i = 0; i < ring.size(); ++i) {
    if (i) out += ',';
    out += '[' + FormatNumber(ring[i].latitude) + ',' + FormatNumber(ring[i].longitude) + ']';
  }
  return out + "]}";
}

}  // namespace crmd::schema
