#include "storage/postgres/libpq.hpp"

#include <string>

#include "storage/storage_error.hpp"
#include "util/shared_library.hpp"

namespace crmd::storage::postgres {

namespace {

// The soname of Debian's libpq5.
constexpr const char* kLibPqSoname = "libpq.so.5";

struct Loaded {
  LibPq library;
  std::string problem;  // empty when every function was found
};

Loaded Load() {
  Loaded loaded;
  const SharedLibrary lib(kLibPqSoname, kLibPqSoname);
  if (!lib.ok()) {
    loaded.problem = "postgresql: " + lib.problem();
    return loaded;
  }
#define CRMD_LIBPQ_FIND(name)                                        \
  if (!lib.Find(#name, loaded.library.name) && loaded.problem.empty()) \
    loaded.problem = std::string("postgresql: ") + kLibPqSoname + " lacks " #name;
  CRMD_LIBPQ_FUNCTIONS(CRMD_LIBPQ_FIND)
#undef CRMD_LIBPQ_FIND
  return loaded;
}

}  // namespace

const LibPq& Pq() {
  static const Loaded loaded = Load();  // thread-safe
  if (!loaded.problem.empty()) throw StorageError(loaded.problem);
  return loaded.library;
}

}  // namespace crmd::storage::postgres
