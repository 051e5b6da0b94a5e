#include "api/client_transport.hpp"

#include <filesystem>
#include <fstream>
#include <vector>

#include "api/json_file_body.hpp"
#include "util/errors.hpp"
#include "util/json.hpp"
#include "util/strings.hpp"

namespace crmd::api {

namespace json = boost::json;

namespace {

// The SDK's bookkeeping, with no meaning in crmd: a JavaScript or client key (crmd has none; the
// application id and the server's permissions are the gate), its version, its session mode, the
// declared type of a file (judged by content here).
constexpr std::string_view kDropped[] = {"_JavaScriptKey", "_ClientKey", "_ClientVersion", "_RevocableSession",
                                         "_ContentType"};

constexpr std::string_view kBase64Key = "base64";

bool IsDropped(std::string_view key) {
  for (auto dropped : kDropped)
    if (key == dropped) return true;
  return false;
}

Method MethodNamed(std::string_view name) {
  if (name == "GET") return Method::kGet;
  if (name == "HEAD") return Method::kHead;
  if (name == "POST") return Method::kPost;
  if (name == "PUT") return Method::kPut;
  if (name == "DELETE") return Method::kDelete;
  return Method::kOther;
}

bool LooksLikeJsonObject(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && text[first] == '{';
}

// A GET's parameters as the query string carries them: strings as they are, anything else
// (`where`, `limit`, `count`) as its JSON, null as absent.
std::string QueryString(const json::object& params) {
  std::string query;
  for (const auto& [key, value] : params) {
    if (value.is_null()) continue;  // an option the SDK left unset (`hint`, `readPreference`)
    query += query.empty() ? "" : "&";
    query += PercentEncode(key);
    query += '=';
    query += value.is_string() ? PercentEncode(value.get_string()) : PercentEncode(ToJson(value));
  }
  return query;
}

// The credential keys of the transport and the headers they stand for.
std::vector<std::pair<std::string_view, const std::string*>> CredentialKeys(const TransportNames& names) {
  return {{"_ApplicationId", &names.app_id},
          {"_MasterKey", &names.master_key},
          {"_SessionToken", &names.session_token},
          {"_InstallationId", &names.installation_id}};
}

// Sets `value` as the header `header` stands for, unless the request sent that header itself (or,
// for the master key, an API key, which is master already).
void StandIn(Request& request, const TransportNames& names, const std::string& header, std::string_view value) {
  if (request.Header(names.api_key) && &header == &names.master_key) return;
  if (!request.Header(header)) request.headers.emplace_back(header, std::string(value));
}

// Parse's JSON file (`{"base64": ..., "_ApplicationId": ..., "_ContentType": ...}`, the type
// judged by content here), read as a stream (api/json_file_body.hpp): its credentials first,
// then, once `admit` let the caller in, its base64 decoded into the upload's file.
std::optional<Response> UnwrapJsonFile(Request& request, const TransportNames& names, const AdmitFile& admit) {
  const bool streamed = !request.body_file.empty();
  if (streamed) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(request.body_file, ec);
    if (ec) return std::nullopt;
    std::ifstream in(request.body_file, std::ios::binary);
    char head[64] = {};
    in.read(head, sizeof head);
    if (!LooksLikeJsonObject(std::string_view(head, static_cast<std::size_t>(in.gcount())))) return std::nullopt;
    if (size > kJsonFileBodyLimit) return ErrorResponse(errors::BodyTooLarge(kJsonFileBodyLimit));
  } else if (!LooksLikeJsonObject(request.body)) {
    return std::nullopt;
  }
  const auto members = ScanJsonFile(request.body_file, request.body);
  if (!members) return std::nullopt;  // the handler answers a body that is no JSON, as always
  const auto has = [&](std::string_view key) {
    return members->strings.contains(key) || members->long_strings.contains(key) || members->not_strings.contains(key);
  };
  if (!has("_method") && !has("_ApplicationId")) return std::nullopt;
  if (has("_method")) {
    const auto method = members->strings.find(std::string_view("_method"));
    if (method == members->strings.end()) return ErrorResponse(errors::BadRequest("_method must be a string."));
    request.method_name = method->second;
    request.method = MethodNamed(request.method_name);
  }
  for (const auto& [key, header] : CredentialKeys(names)) {
    if (members->not_strings.contains(key)) return ErrorResponse(errors::BadRequest(std::string(key) + " must be a string."));
    // A longer value is no credential crmd issued: as if it were not sent.
    if (const auto value = members->strings.find(key); value != members->strings.end()) StandIn(request, names, *header, value->second);
  }
  if (admit)
    if (auto refused = admit(request)) return refused;

  if (members->base64_strings != 1 || members->not_strings.contains(kBase64Key))
    return ErrorResponse(ApiError{400, 0, "A JSON file body must carry base64.", ErrorBody::kErrorOnly});
  const ApiError not_base64{400, 0, "The file's base64 is not valid.", ErrorBody::kErrorOnly};
  if (!streamed) {
    auto bytes = DecodeBase64Member(request.body);
    if (!bytes) return ErrorResponse(not_base64);
    request.body = std::move(*bytes);
  } else {
    // Decoded beside the body, then in its place: the server removes the upload's file by its name.
    const std::string decoded = request.body_file + ".decoded";
    struct RemoveLeftover {
      const std::string& path;
      ~RemoveLeftover() {
        std::error_code ignored;
        std::filesystem::remove(path, ignored);
      }
    } cleanup{decoded};
    if (!DecodeBase64Member(request.body_file, {}, decoded)) return ErrorResponse(not_base64);
    std::filesystem::rename(decoded, request.body_file);  // throws when the disk refuses: a 500
  }
  request.json_body.reset();
  return std::nullopt;
}

}  // namespace

std::optional<Response> UnwrapClientTransport(Request& request, const TransportNames& names, const AdmitFile& admit_file) {
  if (request.method != Method::kPost) return std::nullopt;
  const std::string_view path = std::string_view(request.target).substr(0, request.target.find('?'));
  if (!path.starts_with(names.prefix_path)) return std::nullopt;
  if (path.starts_with(names.files_path)) {
    if (request.Header(names.app_id)) return std::nullopt;  // raw bytes with headers: §4.8 as it is
    return UnwrapJsonFile(request, names, admit_file);
  }

  const std::string& text = request.body;
  if (!request.json_body && !LooksLikeJsonObject(text)) return std::nullopt;
  // Most POSTs are plain writes: a scan, not a parse, tells them apart (their body is parsed once,
  // later, into the arena of the write queue). The SDK writes the keys as they are, unescaped.
  if (!request.json_body && text.find("\"_method\"") == std::string::npos &&
      text.find("\"_ApplicationId\"") == std::string::npos)
    return std::nullopt;

  json::value parsed;
  if (request.json_body) {
    parsed = json::value(*request.json_body, json::storage_ptr());
  } else {
    auto result = ParseJson(text);
    if (!result.ok()) return std::nullopt;  // the handler answers a body that is no JSON, as always
    parsed = std::move(result).value();
  }
  if (!parsed.is_object()) return std::nullopt;
  json::object& body = parsed.get_object();
  if (!body.contains("_method") && !body.contains("_ApplicationId")) return std::nullopt;

  if (const auto* method = body.if_contains("_method")) {
    if (!method->is_string()) return ErrorResponse(errors::BadRequest("_method must be a string."));
    request.method_name = std::string(method->get_string());
    request.method = MethodNamed(request.method_name);
    body.erase("_method");
  }
  for (const auto& [key, header] : CredentialKeys(names)) {
    const auto* value = body.if_contains(key);
    if (!value) continue;
    if (!value->is_string()) return ErrorResponse(errors::BadRequest(std::string(key) + " must be a string."));
    StandIn(request, names, *header, value->get_string());
    body.erase(key);
  }
  for (auto it = body.begin(); it != body.end();) {
    if (IsDropped(it->key())) it = body.erase(it);
    else ++it;
  }

  if (request.method == Method::kGet || request.method == Method::kHead || request.method == Method::kDelete) {
    // The call's parameters are its query string; a body it no longer has.
    if (request.method != Method::kDelete && !body.empty()) {
      const auto mark = request.target.find('?');
      request.target += mark == std::string::npos ? '?' : '&';
      request.target += QueryString(body);
    }
    request.body.clear();
    request.json_body.reset();
    return std::nullopt;
  }
  request.body = ToJson(parsed);
  request.json_body = std::make_shared<const json::value>(std::move(parsed));
  return std::nullopt;
}

}  // namespace crmd::api
