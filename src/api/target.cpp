#include "api/target.hpp"

#include <boost/url/parse.hpp>
#include <boost/url/url_view.hpp>

namespace crmd::api {

std::optional<Target> ParseTarget(std::string_view raw) {
  // An unencoded `#` begins a fragment, which is not part of the request; what precedes it is
  // the request (so a `where` cut there is malformed JSON: spec §4.2's 500).
  raw = raw.substr(0, raw.find('#'));
  auto parsed = boost::urls::parse_origin_form(raw);
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
