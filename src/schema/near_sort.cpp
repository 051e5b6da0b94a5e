// NearSort (schema/query.hpp): a `$nearSphere` sorts only where every match satisfies it, at the
// top of the where or inside its `$and`s; under `$or` or `$nor` it may not hold for a row.
#include "schema/query.hpp"

namespace crmd::schema {

std::optional<NearestFirst> NearSort(const Expr& where) {
  if (where.kind == ExprKind::kGeo && where.geo == GeoShape::kNear && !where.field.column.empty() &&
      where.numbers.size() >= 2)
    return NearestFirst{where.field.column, where.numbers[0], where.numbers[1]};
  if (where.kind != ExprKind::kAnd) return std::nullopt;
  for (const auto& child : where.children)
    if (auto found = NearSort(child)) return found;
  return std::nullopt;
}

}  // namespace crmd::schema
