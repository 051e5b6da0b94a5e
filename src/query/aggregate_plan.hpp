// What storage runs for an aggregation, as query/ names it (schema/aggregate_plan.hpp).
#pragma once

#include "query/where.hpp"
#include "schema/aggregate_plan.hpp"

namespace crmd::query {

using schema::Accumulator;
using schema::AccumulatorOp;
using schema::AggregatePlan;

}  // namespace crmd::query
