#include "util/curl_library.hpp"

#include "util/shared_library.hpp"

namespace crmd {

namespace {

// The soname of Debian's libcurl4 (the OpenSSL flavour crmd builds against).
constexpr const char* kCurlSoname = "libcurl.so.4";

struct Loaded {
  CurlLibrary library;
  std::string problem;  // empty when the library is ready
};

Loaded Load() {
  Loaded loaded;
  const SharedLibrary lib(kCurlSoname, kCurlSoname);
  if (!lib.ok()) {
    loaded.problem = lib.problem();
    return loaded;
  }
  CURLcode (*global_init)(long) = nullptr;
  CurlLibrary& l = loaded.library;
  if (!lib.Find("curl_global_init", global_init) || !lib.Find("curl_easy_init", l.easy_init) ||
      !lib.Find("curl_easy_setopt", l.easy_setopt) || !lib.Find("curl_easy_perform", l.easy_perform) ||
      !lib.Find("curl_easy_getinfo", l.easy_getinfo) || !lib.Find("curl_easy_cleanup", l.easy_cleanup) ||
      !lib.Find("curl_easy_strerror", l.easy_strerror) || !lib.Find("curl_slist_append", l.slist_append) ||
      !lib.Find("curl_slist_free_all", l.slist_free_all)) {
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
