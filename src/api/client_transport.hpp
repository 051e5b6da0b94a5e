// The transport of Parse's client SDKs: every call a `POST` of a JSON body (sent as `text/plain`,
// so a browser makes no preflight) carrying the real method in `_method` and the credentials in
// `_ApplicationId`, `_MasterKey`, `_SessionToken`, ... Such a request is rewritten here into the
// plain one — method, credential headers, query string or body — before anything routes or
// authorizes it: the router's one door then decides, as for a request sent with headers.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>

#include "api/message.hpp"

namespace crmd::api {

// The lower-case header names the body's keys stand for, and where the API lives.
struct TransportNames {
  std::string prefix_path;  // "/parse/": only requests below it are rewritten
  std::string files_path;   // "/parse/files/": a JSON body there is a file sent as base64
  std::string app_id, master_key, session_token, installation_id;
  // A request with an API key (configured in the SDK as a request header) needs no master key:
  // the key has the master identity (spec §5.2), and the SDK's `_MasterKey`, which it sends for
  // every call it makes with `useMasterKey` (schemas, aggregates, config), is dropped.
  std::string api_key;
};

// A file sent as base64 in JSON names its application only in its body, after the file: at most
// this much JSON (a ~24 MB file) is taken before the application is known; a larger file is sent
// as raw bytes with the application-id header. (It is read as a stream, never whole: the bound is
// on the disk and time an anonymous body costs, not on memory.)
inline constexpr std::size_t kJsonFileBodyLimit = 32u << 20;

// Called once a file sent as JSON names its caller (the body's credential keys set as headers),
// before its base64 is decoded: an answer refuses the upload (an application that does not
// exist, an anonymous caller past its upload rate), nullopt lets it go on.
using AdmitFile = std::function<std::optional<Response>(const Request& request)>;

// Rewrites `request` in place when it is a call in that transport; answers it when the call is
// malformed (a `_method` that is no string, a file body that is no base64) or, for a file, when
// `admit_file` refuses it. Each credential key stands for its header, and a header the request
// sent itself wins: the body adds no credential a header would not. Unknown `_` keys stay, in the
// body or as a query parameter, where the body and query rules refuse them as they refuse any.
std::optional<Response> UnwrapClientTransport(Request& request, const TransportNames& names,
                                              const AdmitFile& admit_file = {});

}  // namespace crmd::api
