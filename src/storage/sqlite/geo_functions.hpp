// SQLite functions of Parse's geo queries (issue 36), registered on every connection; the math is
// util/geo_math.hpp's, so both stores and the unit tests read one definition of it.
//   crmd_geo_distance(lat1, lng1, lat2, lng2)    radians on the sphere; NULL when one is NULL
//   crmd_geo_in_polygon(lat, lng, ring)          1 when the point is in the ring `[[lat,lng],..]`
//                                                (edges included); the ring is parsed once per
//                                                statement
//   crmd_geo_polygon_holds(polygon, lat, lng)    1 when the stored Polygon value holds the point
#pragma once

#include <sqlite3.h>

namespace crmd::storage::sqlite {

void RegisterGeoFunctions(sqlite3* db);

}  // namespace crmd::storage::sqlite
