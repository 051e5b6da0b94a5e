#include "cli/app_files.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>
#include <utility>

#include "storage/transfer.hpp"
#include "util/base64.hpp"
#include "util/json.hpp"

namespace crmd::cli {

namespace json = boost::json;
namespace fs = std::filesystem;

namespace {

// Raw bytes per `file` line: 4 MiB of base64, so neither side holds more of a file than that.
constexpr std::size_t kPieceBytes = 3u << 20;

bool IsStoreFile(const fs::path& relative) {
  const std::string name = relative.string();
  return name == "data.db" || name == "data.db-wal" || name == "data.db-shm";
}

// `relative` as a path under the folder: no root, no `..`, not empty.
bool StaysInside(const fs::path& relative) {
  if (relative.empty() || relative.is_absolute()) return false;
  for (const auto& part : relative)
    if (part == ".." || part == ".") return false;
  return true;
}

}  // namespace

FilesCount ExportAppFiles(const std::string& app_dir, std::ostream& out) {
  FilesCount count;
  std::map<std::pair<dev_t, ino_t>, std::string> sent;  // a file's first name, by its inode
  std::error_code ec;
  std::vector<fs::path> paths;
  for (auto it = fs::recursive_directory_iterator(app_dir, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
    if (it->is_regular_file()) paths.push_back(it->path());
  if (ec) throw std::runtime_error("cannot read " + app_dir + ": " + ec.message());
  std::sort(paths.begin(), paths.end());  // files/ before public/: links follow their file
  for (const auto& path : paths) {
    const fs::path relative = fs::relative(path, app_dir);
    if (IsStoreFile(relative)) continue;
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) continue;  // removed meanwhile (a server's orphan sweep)
    const auto [at, first] = sent.try_emplace({st.st_dev, st.st_ino}, relative.string());
    if (!first) {
      out << ToJson(json::object{{"link", json::object{{"path", relative.string()}, {"to", at->second}}}}) << '\n';
      continue;
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + path.string());
    std::string piece(kPieceBytes, '\0');
    for (bool first_piece = true;; first_piece = false) {  // an empty file is one empty piece
      in.read(piece.data(), static_cast<std::streamsize>(piece.size()));
      const auto n = static_cast<std::size_t>(in.gcount());
      if (n == 0 && !first_piece) break;
      out << ToJson(json::object{{"file", json::object{{"path", relative.string()},
                                                       {"data", EncodeBase64(std::string_view(piece.data(), n))}}}})
          << '\n';
      count.bytes += static_cast<std::int64_t>(n);
      if (n < piece.size()) break;
    }
    ++count.count;
  }
  out << ToJson(json::object{{"files", json::object{{"count", count.count}, {"bytes", count.bytes}}}}) << '\n';
  return count;
}

FilesCount ImportAppFiles(std::istream& in, const std::string& app_dir) {
  FilesCount count;
  std::set<std::string> made;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const auto [kind, body] = storage::ReadExportLine(line, "an unreadable line among the export's files");
    if (kind == "files") {
      const auto& o = body.as_object();
      if (o.at("count").to_number<std::int64_t>() != count.count || o.at("bytes").to_number<std::int64_t>() != count.bytes)
        throw std::runtime_error("the files imported do not match the export's count");
      return count;
    }
    const auto& o = body.as_object();
    const fs::path relative(std::string(o.at("path").as_string()));
    if (!StaysInside(relative) || IsStoreFile(relative)) throw std::runtime_error("the export names a path outside the application: " + relative.string());
    const fs::path target = fs::path(app_dir) / relative;
    fs::create_directories(target.parent_path());
    if (kind == "file") {
      auto bytes = DecodeBase64(o.at("data").as_string());
      if (!bytes) throw std::runtime_error("a file of the export is not base64: " + relative.string());
      const bool first = made.insert(relative.string()).second;
      std::ofstream out(target, std::ios::binary | (first ? std::ios::trunc : std::ios::app));
      out.write(bytes->data(), static_cast<std::streamsize>(bytes->size()));
      out.close();
      if (!out) throw std::runtime_error("cannot write " + target.string());
      count.bytes += static_cast<std::int64_t>(bytes->size());
      if (first) ++count.count;
    } else if (kind == "link") {
      const fs::path to(std::string(o.at("to").as_string()));
      if (!StaysInside(to) || !made.contains(to.string())) throw std::runtime_error("a link of the export to no file: " + relative.string());
      std::error_code ec;
      fs::remove(target, ec);
      fs::create_hard_link(fs::path(app_dir) / to, target);
    } else {
      throw std::runtime_error("an unknown line among the export's files: " + std::string(kind));
    }
  }
  throw std::runtime_error("the export is cut short: its files have no end line");
}

FilesCount UploadedFiles(const std::string& app_dir) {
  FilesCount count;
  std::error_code ec;
  for (auto it = fs::directory_iterator(fs::path(app_dir) / "files", ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    std::error_code size_ec;
    const auto size = it->file_size(size_ec);
    if (size_ec || !it->is_regular_file()) continue;
    ++count.count;
    count.bytes += static_cast<std::int64_t>(size);
  }
  return count;
}

}  // namespace crmd::cli
