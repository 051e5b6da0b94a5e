#include "api/cors.hpp"

#include <boost/algorithm/string/predicate.hpp>

#include <unordered_set>

namespace crmd::api {

namespace {

constexpr const char* kAllowedMethods = "GET,PUT,POST,DELETE,OPTIONS";

// Headers crmd reads under the prefix, plus Parse's other defaults, so SDK preflights pass.
constexpr const char* kPrefixedHeaders[] = {"Application-Id", "API-Key",        "Master-Key",
                                            "Session-Token",  "REST-API-Key",   "Javascript-Key",
                                            "Client-Version", "Revocable-Session", "Request-Id",
                                            "Installation-Id"};
// MCP clients in a browser add their protocol headers (../shared/research/MCP.md §1.4).
constexpr const char* kPlainHeaders =
    "X-Requested-With, Content-Type, Pragma, Cache-Control, Authorization, Accept, MCP-Protocol-Version, "
    "Mcp-Session-Id, Last-Event-ID";

// Names echoed from a preflight's Access-Control-Request-Headers at most: a browser asks for a
// handful; a 15 KB list of made-up names is work for nobody.
constexpr std::size_t kMaxEchoedHeaders = 64;

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

}  // namespace

Response Preflight(const Request& request, const std::string& header_prefix) {
  Response r;
  r.status = 200;
  r.content_type = "text/plain; charset=utf-8";
  r.body = "OK";
  std::string allowed;
  std::unordered_set<std::string> seen;  // lower case: one pass over what is asked, not one per name
  for (const char* h : kPrefixedHeaders) {
    allowed += header_prefix + h + ", ";
    seen.insert(Lower(header_prefix + h));
  }
  allowed += kPlainHeaders;
  // Every X-Core-* header the browser asks about is allowed (spec §1), whatever its suffix.
  if (auto asked = request.Header("access-control-request-headers")) {
    std::string_view rest = *asked;
    std::size_t echoed = 0;
    while (!rest.empty() && echoed < kMaxEchoedHeaders) {
      auto comma = rest.find(',');
      const std::string_view name = Trim(rest.substr(0, comma));
      if (boost::algorithm::istarts_with(name, header_prefix) && name.find_first_of("\r\n") == std::string_view::npos &&
          seen.insert(Lower(name)).second) {
        allowed += ", ";
        allowed += name;
        ++echoed;
      }
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
  }
  r.headers.emplace_back("Access-Control-Allow-Methods", kAllowedMethods);
  r.headers.emplace_back("Access-Control-Allow-Headers", allowed);
  r.headers.emplace_back("Access-Control-Max-Age", "86400");
  AddCorsHeaders(request, r);
  return r;
}

void AddCorsHeaders(const Request& request, Response& response) {
  auto origin = request.Header("origin");
  if (!origin || origin->find_first_of("\r\n") != std::string_view::npos) return;
  response.headers.emplace_back("Access-Control-Allow-Origin", std::string(*origin));
  response.headers.emplace_back("Vary", "Origin");
}

}  // namespace crmd::api
