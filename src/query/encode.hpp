// Rows as the record API returns them, as query/ names them (schema/encode.hpp).
#pragma once

#include "schema/encode.hpp"
#include "storage/row.hpp"

namespace crmd::query {

using schema::EncodeRow;
using schema::Expansions;
using schema::PointerSpan;
using schema::SpliceIncluded;
using schema::WriteIncludedRow;
using schema::WriteRow;

}  // namespace crmd::query
