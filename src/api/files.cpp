#include "api/files.hpp"

#include <filesystem>
#include <fstream>

#include "api/signin_gate.hpp"
#include "app/application.hpp"
#include "files/file_names.hpp"
#include "files/file_store.hpp"
#include "files/file_type.hpp"
#include "files/file_usage.hpp"
#include "query/read.hpp"
#include "schema/names.hpp"
#include "util/errors.hpp"
#include "util/ids.hpp"
#include "util/log.hpp"

namespace crmd::api {

namespace {

Response FileError(int status, std::string message) {
  return ErrorResponse(ApiError{status, 0, std::move(message), ErrorBody::kErrorOnly});
}

// The first bytes of the upload, where libmagic looks.
std::string Head(const Request& request) {
  if (request.body_file.empty()) return request.body.substr(0, files::kSniffBytes);
  std::ifstream in(request.body_file, std::ios::binary);
  std::string head(files::kSniffBytes, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in.gcount()));
  return head;
}

// The upload as a file of its own: the server's streamed one, or the in-memory body written out
// (a request that did not come through the HTTP server's upload path).
std::string BodyFile(const Request& request, const std::string& app_dir) {
  if (!request.body_file.empty()) return request.body_file;
  const auto path = std::filesystem::path(app_dir) / ("upload-" + ids::RandomAlnum(16) + ".part");
  std::ofstream out(path, std::ios::binary);
  out.write(request.body.data(), static_cast<std::streamsize>(request.body.size()));
  if (!out) throw std::runtime_error("cannot write " + path.string());
  return path.string();
}

Response Upload(const Request& request, const std::string& name, auth::Context& ctx) {
  if (!files::IsUploadName(name)) return FileError(400, "Invalid file name");
  // By content, against the allowlist and the name's extension; the Content-Type is the client's.
  const auto type = files::AllowedType(name, Head(request));
  if (!type) return FileError(403, "Invalid file type");
  // The application's quota (issue 31 #18), when its operator set one: the bytes are taken before
  // the file is kept, so uploads running at once cannot pass it together.
  const std::int64_t quota_mib = ctx.credentials ? ctx.credentials->gates.file_quota_mib : 0;
  files::FileUsage* usage = quota_mib > 0 ? &files::FileUsage::Of(ctx.app->dir()) : nullptr;
  std::uint64_t size = request.body.size();
  if (usage && !request.body_file.empty()) size = std::filesystem::file_size(request.body_file);
  if (usage && !usage->Take(size, static_cast<std::uint64_t>(quota_mib) << 20))
    return ErrorResponse(errors::FileQuotaExceeded(quota_mib));
  const std::string stored = files::NewStoredName(name);
  try {
    const std::string temp = BodyFile(request, ctx.app->dir());
    try {
      files::Keep(temp, ctx.app->dir(), stored);
    } catch (const std::exception&) {
      std::error_code ignored;
      if (request.body_file.empty()) std::filesystem::remove(temp, ignored);
      throw;
    }
  } catch (const std::exception& e) {
    if (usage) usage->Settle(size, false);
    log::Error("upload not kept", {{"app", ctx.app->id()}, {"error", e.what()}});
    return ErrorResponse(errors::Internal());
  }
  if (usage) usage->Settle(size, true);
  const auto& settings = ctx.app->settings();
  const std::string url = settings.public_url + "/" + settings.prefix + "/files/" + ctx.app->id() + "/" +
                          files::EncodeSegment(stored);
  auto response = JsonResponse(201, boost::json::object{{"url", url}, {"name", stored}});
  response.headers.emplace_back("Location", url);
  return response;
}

Response Delete(const std::string& name, auth::Context& ctx) {
  // A name that does not exist answers the same (§4.8), but for Parse's clients, which expect
  // its 153 (parseNames gate).
  const bool removed = files::Remove(ctx.app->dir(), name);
  if (removed) files::FileUsage::Of(ctx.app->dir()).Forget();
  // The spec's answer is an empty body; the Parse SDK reads every answer as JSON (parseNames gate).
  if (ctx.identity.gates.parse_names) return removed ? JsonResponse(200, boost::json::object{}) : ErrorResponse(errors::FileDeleteFailed());
  Response response;
  response.content_type = "text/plain; charset=utf-8";
  return response;
}

// Types a browser shows without running anything; any other is sent as an attachment.
bool ShownInline(std::string_view type) {
  return type.starts_with("image/") || type.starts_with("audio/") || type.starts_with("video/") ||
         type == "application/pdf" || type == "text/plain";
}

struct ByteRange {
  std::uint64_t first = 0, length = 0;
};

// One `bytes=` range of a file of `size` bytes: nullopt when there is none to honour (absent, or a
// list of several, which is answered whole); `length` 0 when it cannot be satisfied (416).
std::optional<ByteRange> RangeOf(std::optional<std::string_view> header, std::uint64_t size) {
  if (!header || !header->starts_with("bytes=")) return std::nullopt;
  const std::string_view spec = header->substr(6);
  if (spec.find(',') != std::string_view::npos) return std::nullopt;
  const auto dash = spec.find('-');
  if (dash == std::string_view::npos) return ByteRange{};
  auto number = [](std::string_view digits) -> std::optional<std::uint64_t> {
    if (digits.empty() || digits.size() > 19) return std::nullopt;
    std::uint64_t v = 0;
    for (char c : digits) {
      if (c < '0' || c > '9') return std::nullopt;
      v = v * 10 + static_cast<std::uint64_t>(c - '0');
    }
    return v;
  };
  const auto from = number(spec.substr(0, dash));
  const auto to = number(spec.substr(dash + 1));
  if (!from) {  // the last `to` bytes
    if (!to || *to == 0 || size == 0) return ByteRange{};
    const std::uint64_t n = std::min(*to, size);
    return ByteRange{size - n, n};
  }
  if (*from >= size || (to && *to < *from)) return ByteRange{};
  const std::uint64_t last = to ? std::min(*to, size - 1) : size - 1;
  return ByteRange{*from, last - *from + 1};
}

// The file `name` at `path` (nullopt: none) as a streamed answer: typed by the name its upload
// checked, never run by a browser, `Range` honoured.
Response ServeFile(const Request& request, std::string_view name, const std::optional<std::string>& path) {
  std::error_code ec;
  const auto size = path ? std::filesystem::file_size(*path, ec) : 0;
  if (!path || ec) return FileError(404, "File not found");
  Response response;
  const std::string type = files::ServedType(name);
  response.content_type = type;
  response.headers.emplace_back("Accept-Ranges", "bytes");
  // Whatever the file holds, a browser runs nothing of it (../shared/SECURITY.md "files").
  response.headers.emplace_back("Content-Security-Policy", "default-src 'none'; sandbox");
  response.headers.emplace_back("Content-Disposition", ShownInline(type) ? "inline" : "attachment");
  response.file = *path;
  response.file_length = size;
  if (auto range = RangeOf(request.Header("range"), size)) {
    if (range->length == 0) {
      Response refused = FileError(416, "Range Not Satisfiable");
      refused.headers.emplace_back("Content-Range", "bytes */" + std::to_string(size));
      return refused;
    }
    response.status = 206;
    response.file_offset = range->first;
    response.file_length = range->length;
    response.headers.emplace_back("Content-Range", "bytes " + std::to_string(range->first) + "-" +
                                                       std::to_string(range->first + range->length - 1) + "/" +
                                                       std::to_string(size));
  }
  return response;
}

}  // namespace

Response HandleDownload(const Request& request, const std::vector<std::string>& address, auth::Context& ctx) {
  const app::Application& app = *ctx.app;
  const std::string& name = address[0];
  const bool master = ctx.identity.IsMaster();
  const bool user = ctx.identity.principal == auth::Principal::kUser;
  auto gate = [&] {
    std::string back = FilesBase(app) + files::EncodeSegment(name);
    for (std::size_t i = 1; i < address.size(); ++i) {
      back += '/';
      back += files::EncodeSegment(address[i]);
    }
    return RedirectToGate(app, back);
  };
  if (address.size() == 1) {
    // The upload's own address: any signed-in user until the file is attached privately; then
    // users reach it only through the record that holds it.
    if (master || (user && !files::IsPrivate(app.dir(), name))) return ServeFile(request, name, files::FilePath(app.dir(), name));
    return gate();
  }
  // The private address: the record is read as a GET of it reads it, with the caller's rights.
  if (!master && !user) return gate();
  const std::string& table = address[1];
  const std::string& object_id = address[2];
  const std::string& field = address[3];
  bool holds = false;
  if (schema::IsValidUserClassName(table) || schema::IsSystemClassName(table)) {
    auto record = query::GetRecord(ctx, table, object_id, {}, std::vector<std::string>{field});
    if (!record.ok()) return master ? FileError(404, "File not found") : gate();
    const auto* value = record.value().if_contains(field);
    const auto* file = value && value->is_object() ? &value->get_object() : nullptr;
    const auto* type = file ? file->if_contains("__type") : nullptr;
    const auto* held = file ? file->if_contains("name") : nullptr;
    holds = type && type->is_string() && type->get_string() == "File" && held && held->is_string() &&
            held->get_string() == name;
  } else if (!master) {
    return gate();
  }
  if (!holds) return FileError(404, "File not found");
  return ServeFile(request, name, files::FilePath(app.dir(), name));
}

Response HandleStatic(const Request& request, const app::Application& app, const std::string& name) {
  Response response = ServeFile(request, name, files::PublicPath(app.dir(), name));
  if (response.status == 200 || response.status == 206)
    response.headers.emplace_back("Cache-Control", "public, max-age=86400");
  return response;
}

Response HandleFiles(const Request& request, const Target& target, auth::Context& ctx) {
  if (target.segments.size() != 2) return ErrorResponse(errors::RouteNotFound(request.method_name, target.path));
  const std::string& name = target.segments[1];
  switch (request.method) {
    case Method::kPost: return Upload(request, name, ctx);
    case Method::kDelete: return Delete(name, ctx);
    default: return ErrorResponse(errors::RouteNotFound(request.method_name, target.path));
  }
}

}  // namespace crmd::api
