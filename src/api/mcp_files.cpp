#include "api/mcp_files.hpp"

#include <fstream>

#include "api/files.hpp"
#include "api/message.hpp"
#include "api/target.hpp"
#include "app/application.hpp"
#include "files/file_names.hpp"
#include "files/file_store.hpp"
#include "util/json.hpp"

namespace crmd::api {

namespace json = boost::json;

namespace {

std::pair<int, json::value> Upload(auth::Context& ctx, const std::string& prefix, std::string_view file_name,
                                   std::string bytes, bool publish) {
  Request request;
  request.method = Method::kPost;
  request.method_name = "POST";
  request.body = std::move(bytes);
  Target target;
  target.path = "/" + prefix + "/files/" + files::EncodeSegment(file_name);
  target.segments = {"files", std::string(file_name)};
  Response response = HandleFiles(request, target, ctx);
  auto parsed = ParseJson(response.body);
  json::value answer = parsed.ok() ? std::move(parsed).value() : json::value();
  if (response.status != 201 || !publish || !answer.is_object()) return {response.status, std::move(answer)};
  const std::string name(answer.get_object().at("name").get_string());
  if (!files::Publish(ctx.app->dir(), name)) return {500, json::object{{"error", "The file could not be made public."}}};
  answer.get_object()["url"] = ctx.app->settings().static_url + "/" + ctx.app->id() + "/" + files::EncodeSegment(name);
  return {response.status, std::move(answer)};
}

// The answer of a GET of the file at `address` for ctx: its address's handler, as HTTP routes it.
Response Fetch(auth::Context& ctx, std::string_view address) {
  const app::Application& app = *ctx.app;
  const auto& settings = app.settings();
  const std::string files_base = settings.public_url + "/" + settings.prefix + "/files/" + app.id() + "/";
  const std::string static_base = settings.static_url + "/" + app.id() + "/";
  Request request;
  request.method = Method::kGet;
  request.method_name = "GET";
  const auto segments = [](std::string_view rest) {
    std::string path = "/";
    path += rest.substr(0, rest.find('?'));
    auto target = ParseTarget(path);
    return target ? target->segments : std::vector<std::string>{};
  };
  std::vector<std::string> path;
  if (address.starts_with(files_base)) {
    path = segments(address.substr(files_base.size()));
    if (path.size() == 1 || path.size() == 4) return HandleDownload(request, path, ctx);
  } else if (address.starts_with(static_base)) {
    path = segments(address.substr(static_base.size()));
    if (path.size() == 1) return HandleStatic(request, app, path[0]);
  } else if (address.find("://") == std::string_view::npos && address.find('/') == std::string_view::npos) {
    return HandleDownload(request, {std::string(address)}, ctx);  // a stored name
  }
  return ErrorResponse(ApiError{404, 0, "File not found", ErrorBody::kErrorOnly});
}

mcp::FileBytes Read(auth::Context& ctx, std::string_view address, std::size_t max_bytes) {
  Response response = Fetch(ctx, address);
  mcp::FileBytes out;
  out.status = response.status;
  if (response.status == 302 || response.status == 403) {
    out.error = "Permission denied for this file: it follows the permissions of the record that holds it";
    return out;
  }
  if (response.status != 200 || response.file.empty()) {
    out.error = "File not found";
    return out;
  }
  if (response.file_length > max_bytes) {
    out.status = 413;
    out.error = "The file has " + std::to_string(response.file_length) + " bytes, more than the " +
                std::to_string(max_bytes) + " a tool returns; open its url instead";
    return out;
  }
  out.type = response.content_type;
  out.bytes.resize(response.file_length);
  std::ifstream in(response.file, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(response.file_offset));
  in.read(out.bytes.data(), static_cast<std::streamsize>(out.bytes.size()));
  if (static_cast<std::size_t>(in.gcount()) != out.bytes.size()) {
    out.status = 404;
    out.error = "File not found";
  }
  return out;
}

}  // namespace

mcp::FileDoor McpFileDoor(std::string prefix) {
  mcp::FileDoor door;
  door.upload = [prefix](auth::Context& ctx, std::string_view name, std::string bytes, bool publish) {
    return Upload(ctx, prefix, name, std::move(bytes), publish);
  };
  door.read = [](auth::Context& ctx, std::string_view address, std::size_t max_bytes) { return Read(ctx, address, max_bytes); };
  return door;
}

}  // namespace crmd::api
