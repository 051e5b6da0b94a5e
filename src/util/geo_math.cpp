#include "util/geo_math.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace crmd::geo {

namespace {

double Radians(double degrees) { return degrees * std::numbers::pi / 180.0; }

// Whether p lies on the segment a-b: collinear within rounding, and between its ends.
bool OnSegment(Point p, Point a, Point b) {
  const double cross = (b.latitude - a.latitude) * (p.longitude - a.longitude) -
                       (b.longitude - a.longitude) * (p.latitude - a.latitude);
  const double scale = std::max({std::fabs(b.latitude - a.latitude), std::fabs(b.longitude - a.longitude), 1.0});
  if (std::fabs(cross) > 1e-12 * scale * scale) return false;
  return p.latitude >= std::min(a.latitude, b.latitude) && p.latitude <= std::max(a.latitude, b.latitude) &&
         p.longitude >= std::min(a.longitude, b.longitude) && p.longitude <= std::max(a.longitude, b.longitude);
}

}  // namespace

double DistanceRadians(Point a, Point b) {
  const double dlat = Radians(b.latitude - a.latitude);
  const double dlng = Radians(b.longitude - a.longitude);
  const double s = std::sin(dlat / 2) * std::sin(dlat / 2) +
                   std::cos(Radians(a.latitude)) * std::cos(Radians(b.latitude)) * std::sin(dlng / 2) * std::sin(dlng / 2);
  return 2 * std::asin(std::sqrt(std::clamp(s, 0.0, 1.0)));
}

bool InPolygon(Point p, const std::vector<Point>& ring) {
  const std::size_t n = ring.size();
  if (n < 3) return false;
  bool inside = false;
  for (std::size_t i = 0, j = n - 1; i < n; j = i++) {
    const Point a = ring[i], b = ring[j];
    if (OnSegment(p, a, b)) return true;
    // Even-odd rule: count the edges a ray towards +longitude crosses.
    if ((a.latitude > p.latitude) != (b.latitude > p.latitude)) {
      const double at = (b.longitude - a.longitude) * (p.latitude - a.latitude) / (b.latitude - a.latitude) + a.longitude;
      if (p.longitude < at) inside = !inside;
    }
  }
  return inside;
}

}  // namespace crmd::geo
