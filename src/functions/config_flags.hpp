// The `Config` flag rows that gate the public form functions (spec §4.9): `{Name: "<flag>",
// Value: {"<flag>": true}}`. With several rows of one Name the first created decides, so an old
// false hides a newer true.
#pragma once

#include <string_view>

#include "app/application.hpp"

namespace crmd::functions {

// Whether `flag` is on in `app`: its first-created Config row says true. Cached until the next
// durable commit that writes a Config row (a busy form costs no query per call).
bool ConfigFlag(app::Application& app, std::string_view flag);

}  // namespace crmd::functions
