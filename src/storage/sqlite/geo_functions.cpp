#include "storage/sqlite/geo_functions.hpp"

#include <string_view>
#include <vector>

#include <boost/json.hpp>

#include "util/geo_math.hpp"

namespace crmd::storage::sqlite {

namespace {

using Ring = std::vector<geo::Point>;

bool AnyNull(int argc, sqlite3_value** argv) {
  for (int i = 0; i < argc; ++i)
    if (sqlite3_value_type(argv[i]) == SQLITE_NULL) return true;
  return false;
}

// `[[lat,lng],...]`, as crmd wrote it (a query's ring, or a stored Polygon's coordinates).
bool ReadRing(const boost::json::value& coordinates, Ring& ring) {
  if (!coordinates.is_array()) return false;
  for (const auto& pair : coordinates.get_array()) {
    if (!pair.is_array() || pair.get_array().size() != 2) return false;
    const auto& p = pair.get_array();
    if (!p[0].is_number() || !p[1].is_number()) return false;
    ring.push_back(geo::Point{p[0].to_number<double>(), p[1].to_number<double>()});
  }
  return true;
}

std::string_view Text(sqlite3_value* v) {
  const auto* text = reinterpret_cast<const char*>(sqlite3_value_text(v));
  return text ? std::string_view(text, static_cast<std::size_t>(sqlite3_value_bytes(v))) : std::string_view();
}

const boost::json::value* Parsed(std::string_view text, boost::json::value& storage) {
  boost::system::error_code ec;
  storage = boost::json::parse(text, ec);
  return ec ? nullptr : &storage;
}

void Distance(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  if (AnyNull(argc, argv)) return sqlite3_result_null(ctx);
  const geo::Point a{sqlite3_value_double(argv[0]), sqlite3_value_double(argv[1])};
  const geo::Point b{sqlite3_value_double(argv[2]), sqlite3_value_double(argv[3])};
  sqlite3_result_double(ctx, geo::DistanceRadians(a, b));
}

void DeleteRing(void* ring) { delete static_cast<Ring*>(ring); }

void InPolygon(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  if (AnyNull(argc, argv)) return sqlite3_result_null(ctx);
  auto* ring = static_cast<Ring*>(sqlite3_get_auxdata(ctx, 2));
  if (!ring) {
    auto parsed = std::make_unique<Ring>();
    boost::json::value storage;
    const auto* json = Parsed(Text(argv[2]), storage);
    if (!json || !ReadRing(*json, *parsed)) return sqlite3_result_error(ctx, "invalid polygon", -1);
    sqlite3_set_auxdata(ctx, 2, parsed.release(), DeleteRing);
    ring = static_cast<Ring*>(sqlite3_get_auxdata(ctx, 2));
    if (!ring) return sqlite3_result_error_nomem(ctx);
  }
  const geo::Point p{sqlite3_value_double(argv[0]), sqlite3_value_double(argv[1])};
  sqlite3_result_int(ctx, geo::InPolygon(p, *ring) ? 1 : 0);
}

void PolygonHolds(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  if (AnyNull(argc, argv)) return sqlite3_result_null(ctx);
  boost::json::value storage;
  const auto* json = Parsed(Text(argv[0]), storage);
  const auto* coordinates = json && json->is_object() ? json->get_object().if_contains("coordinates") : nullptr;
  Ring ring;
  // A value written outside crmd that is no Polygon holds nothing.
  if (!coordinates || !ReadRing(*coordinates, ring)) return sqlite3_result_int(ctx, 0);
  const geo::Point p{sqlite3_value_double(argv[1]), sqlite3_value_double(argv[2])};
  sqlite3_result_int(ctx, geo::InPolygon(p, ring) ? 1 : 0);
}

}  // namespace

void RegisterGeoFunctions(sqlite3* db) {
  constexpr int kFlags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS;
  sqlite3_create_function_v2(db, "crmd_geo_distance", 4, kFlags, nullptr, Distance, nullptr, nullptr, nullptr);
  sqlite3_create_function_v2(db, "crmd_geo_in_polygon", 3, kFlags, nullptr, InPolygon, nullptr, nullptr, nullptr);
  sqlite3_create_function_v2(db, "crmd_geo_polygon_holds", 3, kFlags, nullptr, PolygonHolds, nullptr, nullptr, nullptr);
}

}  // namespace crmd::storage::sqlite
