// The web folder compiled into the binary (cmake/embed_files.cmake): `console/...`, the console's
// page, scripts and icons (served at /console/ by api/console), and `look.css`, the stylesheet
// the console and crmd's own pages share (api/html_page).
#pragma once

#include <vector>

#include "util/embedded_file.hpp"

namespace crmd::api {

// Sorted by path; lives as long as the process.
const std::vector<util::EmbeddedFile>& WebFiles();

}  // namespace crmd::api
