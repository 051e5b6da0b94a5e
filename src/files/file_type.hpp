// What an uploaded file is, judged by its content (spec §4.8): libmagic names the content's type,
// and the type must be on the allowlist and be one the file name's extension stands for. Neither
// the client's Content-Type nor the extension alone decides: a PNG sent as text/plain is a PNG,
// an HTML page or an SVG named `.png` is refused.
//
// Allowlist (by extension): images (png, jpg, jpeg, gif, webp, bmp, tif, tiff, heic, heif), PDF,
// office documents (doc, docx, xls, xlsx, ppt, pptx, odt, ods, odp, rtf), archives (zip, gz, tgz,
// tar, 7z, rar), audio (mp3, wav, ogg, oga, m4a, aac, flac), video (mp4, m4v, mov, webm, avi, mkv,
// 3gp), plain text and CSV (txt, csv). Nothing a browser would run (HTML, SVG, XML, JavaScript)
// is on it.
//
// Thread-safe (each thread keeps its own libmagic handle).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace crmd::files {

// How much of a file's start libmagic reads: enough for every type on the allowlist, office
// documents in a zip included (their first entry names them).
inline constexpr std::size_t kSniffBytes = 64 * 1024;

// The file's MIME type when `head` (the first kSniffBytes of the content, or all of it) is on the
// allowlist for the extension of `file_name`; nullopt otherwise: not allowed, not matching the
// extension, no extension, or empty.
std::optional<std::string> AllowedType(std::string_view file_name, std::string_view head);

// The type libmagic names for `head` (for logs and tests); empty when it cannot tell.
std::string SniffedType(std::string_view head);

// The type a stored file is served as: its extension's first allowlist type (the upload checked
// the content against that extension, so the name already records it and a download reads no
// content to tell). `application/octet-stream` for an extension not on the allowlist.
std::string ServedType(std::string_view file_name);

}  // namespace crmd::files
