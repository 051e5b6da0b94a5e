#include "api/console.hpp"

#include <cstdint>

#include <fmt/format.h>

#include "api/web_files.hpp"
#include "util/strings.hpp"

namespace crmd::api {

namespace {

// What every answer of the console says to the browser. `connect-src 'self'`: the page talks to
// this crmd only; `img-src blob:` is a PrivateFile's preview, fetched with headers.
constexpr std::string_view kPolicy =
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; connect-src 'self'; "
    "object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'";

std::string_view ContentType(std::string_view path) {
  if (path.ends_with(".html")) return "text/html; charset=utf-8";
  if (path.ends_with(".js") || path.ends_with(".mjs")) return "text/javascript; charset=utf-8";
  if (path.ends_with(".css")) return "text/css; charset=utf-8";
  if (path.ends_with(".svg")) return "image/svg+xml";
  if (path.ends_with(".json")) return "application/json; charset=utf-8";
  return "text/plain; charset=utf-8";
}

// An entity tag from the content: FNV-1a, enough to tell two versions of a file apart.
std::string Etag(std::string_view body) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : body) h = (h ^ c) * 1099511628211ull;
  return fmt::format("\"{:016x}\"", h);
}

void Replace(std::string& text, std::string_view what, std::string_view with) {
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + with.size()))
    text.replace(at, what.size(), with);
}

Response Answer(const Request& request, int status, std::string_view content_type, std::string body, std::string etag) {
  Response r;
  r.status = status;
  r.content_type = std::string(content_type);
  r.headers.emplace_back("Content-Security-Policy", std::string(kPolicy));
  r.headers.emplace_back("X-Content-Type-Options", "nosniff");
  r.headers.emplace_back("X-Frame-Options", "DENY");
  r.headers.emplace_back("Referrer-Policy", "same-origin");
  // Revalidated on every load (names carry no version): a new binary's console shows at once.
  r.headers.emplace_back("Cache-Control", "no-cache");
  if (!etag.empty()) {
    r.headers.emplace_back("ETag", etag);
    if (auto sent = request.Header("if-none-match"); sent && *sent == etag) {
      r.status = 304;
      return r;
    }
  }
  if (request.method != Method::kHead) r.body = std::move(body);
  return r;
}

}  // namespace

std::string_view PublicBasePath(std::string_view public_url) {
  const auto scheme = public_url.find("://");
  const auto slash = public_url.find('/', scheme == std::string_view::npos ? 0 : scheme + 3);
  if (slash == std::string_view::npos) return {};
  std::string_view path = public_url.substr(slash);
  while (path.ends_with('/')) path.remove_suffix(1);
  return path;
}

Console::Console(std::string_view prefix) {
  for (const auto& file : WebFiles()) {
    std::string path;
    if (file.path == "look.css") path = "look.css";
    else if (file.path.starts_with("console/")) path = std::string(file.path.substr(8));
    else continue;
    if (path == "index.html") {
      index_ = std::string(file.content);
      Replace(index_, "{{prefix}}", prefix);
      continue;
    }
    Asset asset{std::string(file.content), std::string(ContentType(path)), {}};
    asset.etag = Etag(asset.body);
    assets_.emplace(std::move(path), std::move(asset));
  }
}

Response Console::Serve(const Request& request, const std::vector<std::string>& segments, std::string_view base_path) const {
  std::string path;
  for (std::size_t i = 1; i < segments.size(); ++i) path += (i > 1 ? "/" : "") + segments[i];
  if (auto it = assets_.find(path); it != assets_.end())
    return Answer(request, 200, it->second.content_type, it->second.body, it->second.etag);
  // A name with an extension is a file that is not there; anything else is one of the page's
  // own addresses (a deep link, a reload), which the page routes.
  const std::string_view last = segments.size() > 1 ? std::string_view(segments.back()) : std::string_view();
  if (last.find('.') != std::string_view::npos)
    return Answer(request, 404, "text/plain; charset=utf-8", "Not found\n", {});
  std::string page = index_;
  Replace(page, "{{base}}", EscapeHtml(base_path));
  std::string etag = Etag(page);
  return Answer(request, 200, "text/html; charset=utf-8", std::move(page), std::move(etag));
}

}  // namespace crmd::api
