#include "files/file_type.hpp"

#include <magic.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <vector>

namespace crmd::files {

namespace {

struct Allowed {
  std::string_view extension;
  // What libmagic may call such content; the first is the registered type downloads are sent as.
  std::vector<std::string_view> types;
};

// Office Open XML and OpenDocument files are zips: libmagic names them by their first entry when
// it can, and `application/zip` when the entry order hides it.
constexpr std::string_view kZip = "application/zip";

const std::vector<Allowed>& Allowlist() {
  static const std::vector<Allowed> list{
      // Images.
      {"png", {"image/png"}},
      {"jpg", {"image/jpeg"}},
      {"jpeg", {"image/jpeg"}},
      {"gif", {"image/gif"}},
      {"webp", {"image/webp"}},
      {"bmp", {"image/bmp", "image/x-ms-bmp"}},
      {"tif", {"image/tiff"}},
      {"tiff", {"image/tiff"}},
      {"heic", {"image/heic", "image/heif"}},
      {"heif", {"image/heic", "image/heif"}},
      // Documents.
      {"pdf", {"application/pdf"}},
      {"doc", {"application/msword", "application/x-ole-storage", "application/CDFV2"}},
      {"xls", {"application/vnd.ms-excel", "application/x-ole-storage", "application/CDFV2"}},
      {"ppt", {"application/vnd.ms-powerpoint", "application/x-ole-storage", "application/CDFV2"}},
      {"docx", {"application/vnd.openxmlformats-officedocument.wordprocessingml.document", kZip}},
      {"xlsx", {"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", kZip}},
      {"pptx", {"application/vnd.openxmlformats-officedocument.presentationml.presentation", kZip}},
      {"odt", {"application/vnd.oasis.opendocument.text", kZip}},
      {"ods", {"application/vnd.oasis.opendocument.spreadsheet", kZip}},
      {"odp", {"application/vnd.oasis.opendocument.presentation", kZip}},
      {"rtf", {"text/rtf"}},
      // Archives.
      {"zip", {kZip}},
      {"gz", {"application/gzip", "application/x-gzip"}},
      {"tgz", {"application/gzip", "application/x-gzip"}},
      {"tar", {"application/x-tar"}},
      {"7z", {"application/x-7z-compressed"}},
      {"rar", {"application/vnd.rar", "application/x-rar"}},
      // Audio.
      {"mp3", {"audio/mpeg"}},
      {"wav", {"audio/wav", "audio/x-wav"}},
      {"ogg", {"audio/ogg", "application/ogg", "video/ogg"}},
      {"oga", {"audio/ogg", "application/ogg"}},
      {"m4a", {"audio/mp4", "audio/x-m4a", "video/mp4"}},
      {"aac", {"audio/aac", "audio/x-hx-aac-adts"}},
      {"flac", {"audio/flac", "audio/x-flac"}},
      // Video.
      {"mp4", {"video/mp4"}},
      {"m4v", {"video/mp4", "video/x-m4v"}},
      {"mov", {"video/quicktime"}},
      {"webm", {"video/webm", "audio/webm"}},
      {"avi", {"video/x-msvideo"}},
      {"mkv", {"video/x-matroska"}},
      {"3gp", {"video/3gpp"}},
      // Text. CSV has no magic of its own: libmagic calls it plain text (or CSV when it can tell).
      {"txt", {"text/plain"}},
      {"csv", {"text/csv", "text/plain", "application/csv"}},
  };
  return list;
}

std::string LowerExtension(std::string_view name) {
  const auto dot = name.rfind('.');
  if (dot == std::string_view::npos || dot + 1 == name.size()) return {};
  std::string ext(name.substr(dot + 1));
  for (char& c : ext)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return ext;
}

// One libmagic handle per thread: a handle is not safe to share, and loading the compiled database
// (mapped, so its pages are shared between handles) costs a few milliseconds once per thread.
magic_t Handle() {
  struct Owned {
    magic_t cookie = nullptr;
    Owned() {
      cookie = magic_open(MAGIC_MIME_TYPE | MAGIC_ERROR);
      if (cookie && magic_load(cookie, nullptr) != 0) {
        magic_close(cookie);
        cookie = nullptr;
      }
    }
    ~Owned() {
      if (cookie) magic_close(cookie);
    }
  };
  thread_local Owned owned;
  if (!owned.cookie) throw std::runtime_error("libmagic: the magic database could not be loaded");
  return owned.cookie;
}

// The allowlist entry of the name's extension, or null.
const Allowed* AllowedFor(std::string_view file_name) {
  const std::string ext = LowerExtension(file_name);
  if (ext.empty()) return nullptr;
  const auto& list = Allowlist();
  const auto found = std::find_if(list.begin(), list.end(), [&](const Allowed& a) { return a.extension == ext; });
  return found == list.end() ? nullptr : &*found;
}

}  // namespace

std::string ServedType(std::string_view file_name) {
  const Allowed* allowed = AllowedFor(file_name);
  return allowed ? std::string(allowed->types.front()) : std::string("application/octet-stream");
}

std::string SniffedType(std::string_view head) {
  if (head.empty()) return {};
  const char* type = magic_buffer(Handle(), head.data(), std::min(head.size(), kSniffBytes));
  return type ? std::string(type) : std::string();
}

std::optional<std::string> AllowedType(std::string_view file_name, std::string_view head) {
  const Allowed* allowed = AllowedFor(file_name);
  if (!allowed || head.empty()) return std::nullopt;
  std::string type = SniffedType(head);
  if (std::find(allowed->types.begin(), allowed->types.end(), type) == allowed->types.end()) return std::nullopt;
  return type;
}

}  // namespace crmd::files
