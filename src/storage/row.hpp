// The rows of cells storage reads and writes (schema/row.hpp: value types every layer shares).
#pragma once

#include "schema/row.hpp"

namespace crmd::storage {

using schema::Cell;
using schema::CellOf;
using schema::IsNull;
using schema::Row;
using schema::RowSet;
using schema::StoredColumns;
using schema::TextOf;

}  // namespace crmd::storage
