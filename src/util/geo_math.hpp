// Distances and containment on the sphere and in the latitude/longitude plane, as Parse's geo
// queries read them (issue 36). Pure functions: thread-safe, no project knowledge.
#pragma once

#include <vector>

namespace crmd::geo {

struct Point {
  double latitude = 0;
  double longitude = 0;
};

// Parse's earth radii, by which the SDK divides `withinKilometers` and `withinMiles` into radians:
// the same constants here make a distance the SDK asked for and the one crmd checks agree.
inline constexpr double kEarthRadiusKm = 6371.0;
inline constexpr double kEarthRadiusMiles = 3958.8;

// The great-circle distance in radians (haversine: exact enough near 0, where the law of cosines
// loses every digit for points a few metres apart).
double DistanceRadians(Point a, Point b);

// Inside the polygon of `ring` (latitude as x, longitude as y, closed or not), its edges and
// corners included: a point on a vertex of the query's polygon matches, as Parse's specs expect.
bool InPolygon(Point p, const std::vector<Point>& ring);

}  // namespace crmd::geo
