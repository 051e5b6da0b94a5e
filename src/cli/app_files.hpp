// An application's folder in `crmd app export` (issue 35: exports carried the store alone, and an
// import answered with records whose files were gone). After the store's lines
// (storage/transfer.hpp), each regular file under `DATA/apps/<appId>/` but the store's own
// (`data.db`, its log and shared memory) as JSON lines:
//   {"file":{"path":"files/<name>","data":"<base64>"}}   one or more per file, in order; the first
//                                                       of a path makes the file, each next one
//                                                       appends (a piece is at most kPieceBytes)
//   {"link":{"path":"public/<name>","to":"files/<name>"}}  a second name of a file already sent
//                                                       (public/ holds hard links: spec §3.3)
//   {"files":{"count":N,"bytes":B}}                     the end: what was sent, checked on import
// Paths are relative to the application's folder and never leave it.
//
// Not thread-safe; the command line's.
#pragma once

#include <cstdint>
#include <istream>
#include <ostream>
#include <string>

namespace crmd::cli {

struct FilesCount {
  std::int64_t count = 0;
  std::int64_t bytes = 0;
};

// Writes the folder's lines; throws std::runtime_error when a file cannot be read.
FilesCount ExportAppFiles(const std::string& app_dir, std::ostream& out);
// Makes the files the lines describe under `app_dir`; throws std::runtime_error when the lines
// are not such an export, are cut short, or name a path outside the folder.
FilesCount ImportAppFiles(std::istream& in, const std::string& app_dir);
// Bytes of the uploaded files of an application (`files/`; public/ holds second names of them).
FilesCount UploadedFiles(const std::string& app_dir);

}  // namespace crmd::cli
