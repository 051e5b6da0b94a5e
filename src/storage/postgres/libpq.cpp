#include "storage/postgres/libpq.hpp"

#include <dlfcn.h>

#include <string>

#include "storage/storage_error.hpp"

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
  void* handle = dlopen(kLibPqSoname, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    loaded.problem = std::string("postgresql: cannot load ") + kLibPqSoname + ": " + (why ? why : "unknown error");
    return loaded;
  }
#define CRMD_LIBPQ_FIND(name)                                                         \
  loaded.library.name = reinterpret_cast<decltype(&::name)>(dlsym(handle, #name));    \
  if (!loaded.library.name && loaded.problem.empty())                                 \
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
