#include "util/curl_library.hpp"

#include <dlfcn.h>

namespace crmd {

namespace {

// The soname of Debian's libcurl4 (the OpenSSL flavour crmd builds against).
constexpr const char* kCurlSoname = "libcurl.so.4";

struct Loaded {
  CurlLibrary library;
  std::string problem;  // empty when the library is ready
};

template <class Function>
bool Find(void* handle, const char* name, Function& out) {
  out = reinterpret_cast<Function>(dlsym(handle, name));
  return out != nullptr;
}

Loaded Load() {
  Loaded loaded;
  void* handle = dlopen(kCurlSoname, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    loaded.problem = std::string("cannot load ") + kCurlSoname + ": " + (why ? why : "unknown error");
    return loaded;
  }
  CURLcode (*global_init)(long) = nullptr;
  CurlLibrary& l = loaded.library;
  if (!Find(handle, "curl_global_init", global_init) || !Find(handle, "curl_easy_init", l.easy_init) ||
      !Find(handle, "curl_easy_setopt", l.easy_setopt) || !Find(handle, "curl_easy_perform", l.easy_perform) ||
      !Find(handle, "curl_easy_getinfo", l.easy_getinfo) || !Find(handle, "curl_easy_cleanup", l.easy_cleanup) ||
      !Find(handle, "curl_easy_strerror", l.easy_strerror) || !Find(handle, "curl_slist_append", l.slist_append) ||
      !Find(handle, "curl_slist_free_all", l.slist_free_all)) {
    loaded.problem = std::string(kCurlSoname) + " lacks a function crmd calls";
    return loaded;
  }
  if (const CURLcode rc = global_init(CURL_GLOBAL_DEFAULT); rc != CURLE_OK)
    loaded.problem = std::string("curl_global_init failed: ") + l.easy_strerror(rc);
  return loaded;
}

}  // namespace

const CurlLibrary* Curl(std::string& problem) {
  static const Loaded loaded = Load();  // thread-safe
  if (!loaded.problem.empty()) {
    problem = loaded.problem;
    return nullptr;
  }
  return &loaded.library;
}

}  // namespace crmd
