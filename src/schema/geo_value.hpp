// Parse's geo values on the wire (issue 36): `{"__type":"GeoPoint","latitude","longitude"}` and
// `{"__type":"Polygon","coordinates":[[lat,lng],...]}`, checked, and written in the one canonical
// text both stores keep (so that equality of the stored text is equality of the values).
#pragma once

#include <string>
#include <vector>

#include <boost/json.hpp>

#include "schema/class_schema.hpp"
#include "util/geo_math.hpp"
#include "util/result.hpp"

namespace crmd::schema {

// A GeoPoint value; 107 naming what is wrong (latitude outside -90..90, longitude outside
// -180..180, a member that is no number). `what` names the value in the message.
Result<geo::Point> ParseGeoPoint(const boost::json::value& value, std::string_view what = "GeoPoint");
// A GeoPoint value or a `[latitude, longitude]` pair (the points of a `$polygon` and a Polygon).
Result<geo::Point> ParsePointOrPair(const boost::json::value& value, std::string_view what);
// A Polygon value's ring, closed (the first point repeated last when it was not, as Parse stores
// it); 107 below 3 points, or for a point that is no valid pair.
Result<std::vector<geo::Point>> ParsePolygon(const boost::json::value& value);

std::string GeoPointJson(geo::Point p);
std::string PolygonJson(const std::vector<geo::Point>& ring);

// A query's polygon, given as GeoPoints, pairs or a Polygon value: at least 3 points.
Result<std::vector<geo::Point>> ParseRing(const boost::json::value& points, std::string_view what);

// Parse keeps one GeoPoint field per class (its geo index is per class): 111 when `cls` has one
// and `adding`, of `type`, would be a second.
Status CheckOneGeoPoint(const ClassSchema& cls, std::string_view adding, FieldType type);

}  // namespace crmd::schema
