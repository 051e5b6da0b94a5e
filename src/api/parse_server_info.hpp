// `GET /parse/serverInfo` (the master key's), which Parse Dashboard asks before it shows an
// application: which of Parse Server's features this server has. Under `--prefix parse` only.
//
// The features are crmd's own, not Parse Server's list copied: the class browser, columns, classes,
// class-level permissions, purge and Config are there; cloud-code jobs, hooks, the log viewer and
// push are not, and the dashboard hides what is false. `parseServerVersion` is the Parse Server
// release whose REST API crmd's Parse profile follows, with crmd's own version as build metadata
// (semver ignores it when the dashboard compares versions): `9.10.0+crmd.0.3.0.<commit>`.
#pragma once

#include "api/message.hpp"

namespace crmd::api {

// The Parse Server release the Parse profile is checked against (bench/, tests/compat).
inline constexpr const char* kParseApiRelease = "9.10.0";

Response HandleParseServerInfo();

}  // namespace crmd::api
