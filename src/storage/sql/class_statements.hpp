// The statements on the class definitions of a store, `_crmd_schema(className, definition JSON)`,
// that both stores run alike; see record_statements.hpp for how they are bound. Each store creates
// the table.
#pragma once

#include <string>

#include "storage/sql/dialect.hpp"

namespace crmd::storage::sql {

inline constexpr const char* kClassTable = "_crmd_schema";

// Every definition, by class name.
std::string LoadClasses(const Dialect& d);
// Binds className, definition: the class's definition, new or replaced.
std::string SaveClass(const Dialect& d);
// Binds className.
std::string DropClass(const Dialect& d);

}  // namespace crmd::storage::sql
