// The file routes under the prefix (spec §4.8, §3.3): `POST /<prefix>/files/<fileName>` uploads
// (any credential, the application id alone included) and `DELETE /<prefix>/files/<name>`
// removes (master key or API key: the route table, api/routes.hpp, refuses anyone else). Answers
// and errors are `{"error": ...}` without a code (§7).
#pragma once

#include <string>
#include <vector>

#include "api/message.hpp"
#include "api/target.hpp"
#include "app/application.hpp"
#include "auth/context.hpp"

namespace crmd::api {

// `target` is below the prefix: `files/<name>`.
Response HandleFiles(const Request& request, const Target& target, auth::Context& ctx);

// `GET`/`HEAD` of a file's address below `/<prefix>/files/<appId>/`: `address` is `<name>` (the
// upload's address) or `<name>, <Table>, <objectId>, <Field>` (the private address of an attached
// PrivateFile). `ctx` is the caller as the path's application resolves it: keys, a session token
// header, or the sign-in gate's cookie (no application-id header: a browser opens it).
//   <name>:   the master key (or an API key), or a signed-in user while the file is not private.
//   private:  the master key, or a user who may read the record (auth::Authorize through
//             query::GetRecord, as a GET of it), and only while the record's field holds the file.
// Anyone else is sent to the sign-in gate (302). `Range` and `HEAD` work.
Response HandleDownload(const Request& request, const std::vector<std::string>& address, auth::Context& ctx);

// `GET`/`HEAD /static/<appId>/<name>`: the static host (`--static-url`'s default) of files attached
// to File fields. No credential; `Cache-Control: public, max-age=86400`. A file that is not public
// (unattached, private, or deleted) answers 404.
Response HandleStatic(const Request& request, const app::Application& app, const std::string& name);

}  // namespace crmd::api
