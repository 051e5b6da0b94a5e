// The file routes under the prefix (spec §4.8, §3.3): `POST /<prefix>/files/<fileName>` uploads
// (any credential, the application id alone included) and `DELETE /<prefix>/files/<name>`
// removes (master key or API key). Answers and errors are `{"error": ...}` without a code (§7).
#pragma once

#include "api/message.hpp"
#include "api/target.hpp"
#include "app/application.hpp"
#include "auth/context.hpp"

namespace crmd::api {

// `target` is below the prefix: `files/<name>`.
Response HandleFiles(const Request& request, const Target& target, auth::Context& ctx);

// `GET`/`HEAD /<prefix>/files/<appId>/<name>`, the address an upload answers: `ctx` is the caller
// as the path's application resolves it (no application-id header is needed: a browser opens it).
// Served to a key and to a signed-in user of the application; `Range` and `HEAD` work.
Response HandleDownload(const Request& request, const std::string& name, auth::Context& ctx);

// `GET`/`HEAD /static/<appId>/<name>`: the static host (`--static-url`'s default) of files attached
// to File fields. No credential; `Cache-Control: public, max-age=86400`. A file that is not public
// (unattached, private, or deleted) answers 404.
Response HandleStatic(const Request& request, const app::Application& app, const std::string& name);

}  // namespace crmd::api
