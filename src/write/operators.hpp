// Update operators of spec §2.2: Increment, Add, AddUnique, Remove, Delete.
// They are applied to the stored value inside the write transaction, so concurrent operators on
// one record never lose an update (writes to an application are serialised by storage).
#pragma once

#include <boost/json.hpp>
#include <optional>
#include <string>
#include <vector>
#include <string_view>

#include "schema/field_type.hpp"
#include "util/result.hpp"

namespace crmd::write {

enum class OperatorKind { kIncrement, kAdd, kAddUnique, kRemove, kDelete, kAddRelation, kRemoveRelation };

struct Operator {
  OperatorKind kind;
  boost::json::value argument;  // the amount (Increment) or the objects array
  // AddRelation / RemoveRelation: the class the Pointers name and their ids.
  std::string relation_class;
  std::vector<std::string> relation_ids;
};

inline bool IsRelationOperator(const Operator& op) {
  return op.kind == OperatorKind::kAddRelation || op.kind == OperatorKind::kRemoveRelation;
}

// True when `value` is `{"__op": ...}`.
bool IsOperator(const boost::json::value& value);

// Parses and validates an operator object (Parse's 107 messages for bad arguments).
Result<Operator> ParseOperator(const boost::json::object& value);

// Whether `value` is a Batch: `{"__op":"Batch","ops":[...]}`, the Parse SDK's form of an AddRelation
// and a RemoveRelation on one field in one save.
bool IsBatch(const boost::json::object& value);

// The operations of a Batch, in order. Only AddRelation and RemoveRelation may be batched (all the
// SDK batches), naming one class; anything else is 107.
Result<std::vector<Operator>> ParseRelationBatch(const boost::json::object& value);

// The field type an operator gives a field that does not exist yet; nullopt for Delete.
std::optional<schema::FieldDef> TypeCreatedBy(const Operator& op);

// The new value of a field after `op`, given its current wire value (null when absent).
// nullopt means the field's value is removed (Delete).
// 111 when the current value's type does not fit the operator.
Result<std::optional<boost::json::value>> ApplyOperator(const Operator& op,
                                                        const boost::json::value& current,
                                                        const schema::FieldDef& def,
                                                        std::string_view table,
                                                        std::string_view field);

// Whether the result of `op` is echoed in the update response (Parse: Increment, Add,
// AddUnique, Remove).
inline bool EchoesResult(const Operator& op) {
  return op.kind != OperatorKind::kDelete && !IsRelationOperator(op);
}

}  // namespace crmd::write
