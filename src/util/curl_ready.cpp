#include "util/curl_ready.hpp"

#include <curl/curl.h>

#include <mutex>

namespace crmd {

void CurlReady() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

}  // namespace crmd
