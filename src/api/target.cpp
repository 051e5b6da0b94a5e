#include "api/target.hpp"

#include <boost/url/parse.hpp>
#include <boost/url/url_view.hpp>

namespace crmd::api {

namespace {

// RFC 3986 allows these unencoded in a path or query; `%` starts an escape.
bool AllowedInTarget(unsigned char c) {
  if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) return true;
  switch (c) {
    case '-': case '.': case '_': case '~': case '!': case '$': case '&': case '\'': case '(':
    case ')': case '*': case '+': case ',': case ';': case '=': case ':': case '@': case '/':
    case '?': case '%': return true;
    default: return false;
  }
}

// Clients (curl, fetch) send `{`, `"`, `[` and friends raw in `where`; Parse accepts them.
// Escaping them before the strict parse keeps their meaning: they decode back unchanged.
std::string EscapeLenient(std::string_view raw) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(raw.size());
  for (unsigned char c : raw) {
    if (AllowedInTarget(c)) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xF]);
    }
  }
  return out;
}

// A path of letters, digits, `-`, `_` and `/` only (every record route: `/parse/classes/Accounts/<id>`):
// nothing to decode and no query, so its segments are its `/`-separated parts, as the strict parse
// below would find them, without building the escaped copy and the URL view.
bool IsPlainPath(std::string_view raw) {
  if (raw.empty() || raw.front() != '/') return false;
  for (unsigned char c : raw)
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
          c == '/'))
      return false;
  return true;
}

Target SplitPlainPath(std::string_view raw) {
  Target t;
  t.path = std::string(raw);
  for (std::size_t at = 1;;) {
    const std::size_t slash = raw.find('/', at);
    t.segments.emplace_back(raw.substr(at, slash == std::string_view::npos ? std::string_view::npos : slash - at));
    if (slash == std::string_view::npos) break;
    at = slash + 1;
  }
  if (t.segments.back().empty()) t.segments.pop_back();  // trailing slash (or the bare `/`)
  return t;
}

}  // namespace

std::optional<Target> ParseTarget(std::string_view raw) {
  if (IsPlainPath(raw)) return SplitPlainPath(raw);
  // An unencoded `#` begins a fragment, which is not part of the request; what precedes it is
  // the request (so a `where` cut there is malformed JSON: spec §4.2's 500).
  const std::string escaped = EscapeLenient(raw.substr(0, raw.find('#')));
  auto parsed = boost::urls::parse_origin_form(escaped);
  if (!parsed) return std::nullopt;
  const boost::urls::url_view& url = *parsed;
  Target t;
  t.path = std::string(url.encoded_path());
  for (auto segment : url.segments()) t.segments.push_back(std::string(segment));
  if (!t.segments.empty() && t.segments.back().empty()) t.segments.pop_back();  // trailing slash
  boost::urls::encoding_opts form_encoding(/*space_as_plus=*/true);
  for (auto param : url.encoded_params()) {
    std::string key = param.key.decode(form_encoding);
    std::string value = param.has_value ? param.value.decode(form_encoding) : std::string();
    t.params.emplace_back(std::move(key), std::move(value));
  }
  return t;
}

}  // namespace crmd::api
