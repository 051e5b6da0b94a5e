// libcurl, loaded (dlopen) and globally initialised by the first mail or webhook rather than at
// startup.
//
// Linked, libcurl brings a dozen libraries whose constructors run at exec whether or not the
// server ever sends anything (gnutls through librtmp initialises itself and p11-kit's modules:
// ~3 MiB of resident pages and heap); curl_global_init adds OpenSSL's configuration, providers and
// error strings. A server that sends no mail and calls no webhook maps none of them.
// Debian's libcurl (7.88, "threadsafe" among its features) allows the global initialisation from
// any thread. The headers (<curl/curl.h>) still give the types and constants; calls go through
// the table below.
#pragma once

#include <curl/curl.h>

#include <string>

namespace crmd {

struct CurlLibrary {
  CURL* (*easy_init)() = nullptr;
  CURLcode (*easy_setopt)(CURL*, CURLoption, ...) = nullptr;
  CURLcode (*easy_perform)(CURL*) = nullptr;
  CURLcode (*easy_getinfo)(CURL*, CURLINFO, ...) = nullptr;
  void (*easy_cleanup)(CURL*) = nullptr;
  const char* (*easy_strerror)(CURLcode) = nullptr;
  curl_slist* (*slist_append)(curl_slist*, const char*) = nullptr;
  void (*slist_free_all)(curl_slist*) = nullptr;
};

// The library, ready for curl_easy_init; loaded once, never unloaded; thread-safe. nullptr when
// it cannot be loaded or initialised, and then `problem` says why.
const CurlLibrary* Curl(std::string& problem);

}  // namespace crmd
