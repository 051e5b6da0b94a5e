// What storage runs for an aggregation (spec §4.6, Parse's `$group`): one optional group key and
// accumulators over declared columns, under a query's where and ACL constraints.
#pragma once

#include <string>
#include <vector>

#include "schema/query.hpp"

namespace crmd::schema {

enum class AccumulatorOp { kSum, kAvg, kMin, kMax, kCount };

struct Accumulator {
  AccumulatorOp op = AccumulatorOp::kCount;
  std::string column;  // empty with kSum: `{"$sum": <constant>}` (a count times the constant)
  double constant = 1;
};

struct AggregatePlan {
  Query query;                // where and readable_by; order/limit/skip unused
  std::string key_column;     // empty: one group of every row (`_id: null`)
  std::vector<Accumulator> accumulators;
  bool distinct = false;      // SELECT DISTINCT key_column instead (the `distinct` parameter)
};

}  // namespace crmd::schema
