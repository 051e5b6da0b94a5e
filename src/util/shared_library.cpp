#include "util/shared_library.hpp"

namespace crmd {

SharedLibrary::SharedLibrary(const std::string& path, const std::string& label)
    : handle_(dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) {
  if (handle_) return;
  const char* why = dlerror();
  problem_ = "cannot load " + label + ": " + (why ? why : "unknown error");
}

}  // namespace crmd
