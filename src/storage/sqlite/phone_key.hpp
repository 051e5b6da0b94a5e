// `crmd_phone_key(value)`: phone::Key of a text value (NULL otherwise), so that contacts can be
// found by phone through an index on the expression (Database::EnsurePhoneKeyIndex). Registered on
// every connection: a table with such an index cannot be written without it.
#pragma once

#include <sqlite3.h>

namespace crmd::storage::sqlite {

void RegisterPhoneKey(sqlite3* db);

}  // namespace crmd::storage::sqlite
