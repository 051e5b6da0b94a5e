// libcurl's global state, made ready by the first mail or webhook rather than at startup.
//
// curl_global_init initialises OpenSSL (its configuration, providers and error strings): a few
// MiB of the process's memory that a server sending no mail and calling no webhook never needs.
// Debian's libcurl (7.88, "threadsafe" among its features) allows the call from any thread.
#pragma once

namespace crmd {

// Call before curl_easy_init; cheap after the first call.
void CurlReady();

}  // namespace crmd
