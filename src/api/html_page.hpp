// The pages crmd shows a person in a browser (the password page, the sign-in gate): plain HTML
// that runs no script, cannot be framed, sends no referrer and is never cached.
#pragma once

#include <string>
#include <string_view>

#include "api/message.hpp"
#include "util/strings.hpp"  // EscapeHtml, for what a page's body holds

namespace crmd::api {

// A page titled `title` (plain text) around `body` (HTML the caller escaped).
Response HtmlPage(int status, std::string_view title, std::string_view body);

}  // namespace crmd::api
