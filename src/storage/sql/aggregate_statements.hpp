// The statement of an aggregation (schema::AggregatePlan) that both stores run alike; see
// record_statements.hpp for how it is bound. The Dialect spells each accumulator and how a
// column's value is selected.
#pragma once

#include "schema/aggregate_plan.hpp"
#include "schema/class_schema.hpp"
#include "storage/sql/dialect.hpp"

namespace crmd::storage::sql {

// One row per group: the group key (NULL for one group of every row), then one column per
// accumulator; or, for a `distinct` plan, each distinct non-null value of the key. Binds the
// accumulators' constants, then the where's values.
SqlFragment AggregateRows(const Dialect& d, const schema::ClassSchema& cls, const schema::AggregatePlan& plan);

}  // namespace crmd::storage::sql
