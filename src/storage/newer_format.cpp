#include "storage/newer_format.hpp"

#include "storage/storage_error.hpp"

namespace crmd::storage {

void RefuseNewerFormat(const char* what, const std::string& where, std::int64_t format, std::int64_t current) {
  throw StorageError(std::string("the ") + what + " " + where + " is in format " + std::to_string(format) +
                     ", written by a newer crmd; this one reads formats up to " + std::to_string(current) +
                     ": run the newer crmd (or restore a backup taken before the upgrade)");
}

}  // namespace crmd::storage
