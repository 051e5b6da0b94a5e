#include "api/client_transport.hpp"

#include <filesystem>
#include <fstream>

#include "util/base64.hpp"
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

std::optional<std::string> ReadWhole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

std::optional<Response> UnwrapClientTransport(Request& request, const TransportNames& names) {
  if (request.method != Method::kPost) return std::nullopt;
  const std::string_view path = std::string_view(request.target).substr(0, request.target.find('?'));
  if (!path.starts_with(names.prefix_path)) return std::nullopt;
  const bool file = path.starts_with(names.files_path);
  if (file && request.Header(names.app_id)) return std::nullopt;  // raw bytes with headers: §4.8 as it is

  // A file arrives in the upload folder, whatever it holds; only a JSON one is read back.
  std::string file_json;
  if (file && !request.body_file.empty()) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(request.body_file, ec);
    if (ec) return std::nullopt;
    std::ifstream in(request.body_file, std::ios::binary);
    char head[64] = {};
    in.read(head, sizeof head);
    if (!LooksLikeJsonObject(std::string_view(head, static_cast<std::size_t>(in.gcount())))) return std::nullopt;
    if (size > kJsonFileBodyLimit) return ErrorResponse(errors::BodyTooLarge(kJsonFileBodyLimit));
    auto whole = ReadWhole(request.body_file);
    if (!whole) return std::nullopt;
    file_json = std::move(*whole);
  }
  const std::string& text = request.body_file.empty() ? request.body : file_json;
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
  const std::pair<std::string_view, const std::string*> credentials[] = {
      {"_ApplicationId", &names.app_id},
      {"_MasterKey", &names.master_key},
      {"_SessionToken", &names.session_token},
      {"_InstallationId", &names.installation_id},
  };
  const bool api_key = request.Header(names.api_key).has_value();
  for (const auto& [key, header] : credentials) {
    const auto* value = body.if_contains(key);
    if (!value) continue;
    if (!value->is_string()) return ErrorResponse(errors::BadRequest(std::string(key) + " must be a string."));
    const bool stands_in = !(api_key && header == &names.master_key);
    if (stands_in && !request.Header(*header)) request.headers.emplace_back(*header, std::string(value->get_string()));
    body.erase(key);
  }
  for (auto it = body.begin(); it != body.end();) {
    if (IsDropped(it->key())) it = body.erase(it);
    else ++it;
  }

  if (file) {
    // Parse's JSON file: `{"base64": ..., "_ContentType": ...}`, the type judged by content here.
    const auto* base64 = body.if_contains("base64");
    if (!base64 || !base64->is_string())
      return ErrorResponse(ApiError{400, 0, "A JSON file body must carry base64.", ErrorBody::kErrorOnly});
    auto bytes = DecodeBase64(base64->get_string());
    if (!bytes) return ErrorResponse(ApiError{400, 0, "The file's base64 is not valid.", ErrorBody::kErrorOnly});
    if (request.body_file.empty()) {
      request.body = std::move(*bytes);
    } else {
      std::ofstream out(request.body_file, std::ios::binary | std::ios::trunc);
      out.write(bytes->data(), static_cast<std::streamsize>(bytes->size()));
      if (!out) throw std::runtime_error("cannot write " + request.body_file);
    }
    request.json_body.reset();
    return std::nullopt;
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
