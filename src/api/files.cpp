#include "api/files.hpp"

#include <filesystem>
#include <fstream>

#include "app/application.hpp"
#include "files/file_names.hpp"
#include "files/file_store.hpp"
#include "files/file_type.hpp"
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
  const std::string stored = files::NewStoredName(name);
  const std::string temp = BodyFile(request, ctx.app->dir());
  try {
    files::Keep(temp, ctx.app->dir(), stored);
  } catch (const std::exception& e) {
    std::error_code ignored;
    if (request.body_file.empty()) std::filesystem::remove(temp, ignored);
    log::Error("upload not kept", {{"app", ctx.app->id()}, {"error", e.what()}});
    return ErrorResponse(errors::Internal());
  }
  const auto& settings = ctx.app->settings();
  const std::string url = settings.public_url + "/" + settings.prefix + "/files/" + ctx.app->id() + "/" +
                          files::EncodeSegment(stored);
  auto response = JsonResponse(201, boost::json::object{{"url", url}, {"name", stored}});
  response.headers.emplace_back("Location", url);
  return response;
}

Response Delete(const std::string& name, auth::Context& ctx) {
  if (!ctx.identity.IsMaster()) return ErrorResponse(errors::MasterKeyRequired());
  files::Remove(ctx.app->dir(), name);  // a name that does not exist answers the same (§4.8)
  Response response;
  response.content_type = "text/plain; charset=utf-8";
  return response;
}

}  // namespace

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
