// A request-target split into decoded path segments and query parameters.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace crmd::api {

struct Target {
  std::string path;                   // still encoded, for logs and messages
  std::vector<std::string> segments;  // percent-decoded
  // Decoded query parameters in order; `+` is a space (form encoding, spec §4.2).
  std::vector<std::pair<std::string, std::string>> params;

  // The first parameter named `name`; empty when there is none.
  std::string Param(std::string_view name) const {
    for (const auto& [key, value] : params)
      if (key == name) return value;
    return {};
  }
};

// Nullopt when the target is not an origin-form path (`/a/b?c=d`).
std::optional<Target> ParseTarget(std::string_view raw);

}  // namespace crmd::api
