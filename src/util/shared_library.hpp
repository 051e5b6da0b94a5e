// A shared library crmd loads when first needed (dlopen) instead of linking it: libcurl, libpq and
// crmd's own phone module. Never unloaded: their globals live until exit. Not thread-safe by
// itself; each user opens its library once, under a function-local static.
#pragma once

#include <dlfcn.h>

#include <string>

namespace crmd {

class SharedLibrary {
 public:
  // Opens `path` (a soname, or a file's path); `label` names it in problem() when it cannot.
  SharedLibrary(const std::string& path, const std::string& label);

  bool ok() const { return handle_ != nullptr; }
  // "cannot load <label>: <the loader's reason>"; empty once opened.
  const std::string& problem() const { return problem_; }

  // The function `name` of the library, into `out` (a function pointer); false when it has none.
  template <class Function>
  bool Find(const char* name, Function& out) const {
    out = handle_ ? reinterpret_cast<Function>(dlsym(handle_, name)) : nullptr;
    return out != nullptr;
  }

 private:
  void* handle_ = nullptr;
  std::string problem_;
};

}  // namespace crmd
