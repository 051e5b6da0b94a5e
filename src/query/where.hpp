// The `where` AST and the list query, as query/ names them: they are value types of the bottom
// layer (schema/query.hpp), which storage compiles.
#pragma once

#include "schema/query.hpp"
#include "storage/row.hpp"

namespace crmd::query {

using schema::CompareOp;
using schema::Expr;
using schema::ExprKind;
using schema::FieldEquals;
using schema::FieldRef;
using schema::kRegexMemory;
using schema::Query;
using schema::SubQuery;

}  // namespace crmd::query
