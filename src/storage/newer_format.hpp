// Issue 35: the sentence an older crmd refuses a newer registry or store with, on either store.
// The format numbers are each store's own (SQLite: user_version; PostgreSQL: the `format` columns
// of crmd.registry_version and crmd.stores); the words a person reads are the same.
#pragma once

#include <cstdint>
#include <string>

namespace crmd::storage {

// Throws StorageError: `what` ("registry", "store") at `where` (a file, a PostgreSQL schema) is
// in `format`, newer than the `current` this crmd writes.
[[noreturn]] void RefuseNewerFormat(const char* what, const std::string& where, std::int64_t format, std::int64_t current);

}  // namespace crmd::storage
