// The console (issue 34): the page and scripts of web/console/ (compiled in), served at
// `<public path>/console/...` to a browser, which then calls the record API with the credential
// its person typed, as any client does: the console holds no door of its own. What it serves:
//   /console/, any deep link without a file extension   index.html (the page routes by history)
//   /console/look.css                                    web/look.css
//   /console/<file>                                      web/console/<file>
// Every answer carries a strict Content-Security-Policy (scripts and styles of this origin only,
// no inline script, calls to this origin only, never framed) and an ETag; a matching
// If-None-Match is answered 304.
//
// Thread-safe: built once, then read only.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "api/message.hpp"

namespace crmd::api {

class Console {
 public:
  // `prefix` is the record API's (`core`); index.html names it to the scripts.
  explicit Console(std::string_view prefix);

  // The answer to GET or HEAD of `segments` (the path's, `console` first). `base_path` is the
  // public URL's path (`/crm` for `https://host/crm`, empty at the root).
  Response Serve(const Request& request, const std::vector<std::string>& segments, std::string_view base_path) const;

 private:
  struct Asset {
    std::string body;
    std::string content_type;
    std::string etag;
  };
  std::map<std::string, Asset, std::less<>> assets_;  // by path below /console/
  std::string index_;  // index.html with the prefix filled in, its base still to fill
};

// The path part of a public URL (`https://host/crm` → `/crm`; empty for `https://host`).
std::string_view PublicBasePath(std::string_view public_url);

}  // namespace crmd::api
