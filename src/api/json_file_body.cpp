#include "api/json_file_body.hpp"

#include <boost/json/basic_parser_impl.hpp>

#include <fstream>
#include <functional>
#include <stdexcept>

#include "util/base64.hpp"
#include "util/json.hpp"

namespace crmd::api {

namespace json = boost::json;

namespace {

// What one read of the body file takes: a few system calls for a 32 MiB body, little memory.
constexpr std::size_t kReadChunk = 64 * 1024;
// Decoded bytes written out at once.
constexpr std::size_t kWriteChunk = 64 * 1024;

constexpr std::string_view kBase64 = "base64";

// The events of json::basic_parser: keeps the top-level members as JsonFileMembers says, and in
// decoding mode hands the first `base64` string to `decode`, a piece at a time.
class MemberHandler {
 public:
  static constexpr std::size_t max_object_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_array_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_key_size = static_cast<std::size_t>(-1);
  static constexpr std::size_t max_string_size = static_cast<std::size_t>(-1);

  // Decoding mode: `decode` gets the first `base64` string's pieces; false from it stops the parse.
  std::function<bool(std::string_view)> decode;
  JsonFileMembers members;
  bool not_object = false;

  bool on_document_begin(json::error_code&) { return true; }
  bool on_document_end(json::error_code&) { return true; }
  bool on_object_begin(json::error_code& ec) {
    if (depth_ == 0 && started_) return Refuse(ec);
    started_ = true;
    if (depth_ == 1) NotString();
    ++depth_;
    return true;
  }
  bool on_object_end(std::size_t, json::error_code&) {
    --depth_;
    return true;
  }
  bool on_array_begin(json::error_code& ec) {
    if (depth_ == 0) return Refuse(ec);
    if (depth_ == 1) NotString();
    ++depth_;
    return true;
  }
  bool on_array_end(std::size_t, json::error_code&) {
    --depth_;
    return true;
  }
  bool on_key_part(json::string_view part, std::size_t, json::error_code&) {
    if (depth_ == 1) AppendKey(part);
    return true;
  }
  bool on_key(json::string_view part, std::size_t, json::error_code&) {
    if (depth_ != 1) return true;
    AppendKey(part);
    key_done_ = true;
    return true;
  }
  bool on_string_part(json::string_view part, std::size_t, json::error_code& ec) { return String(part, false, ec); }
  bool on_string(json::string_view part, std::size_t, json::error_code& ec) { return String(part, true, ec); }
  bool on_number_part(json::string_view, json::error_code&) { return true; }
  bool on_int64(std::int64_t, json::string_view, json::error_code& ec) { return Scalar(ec); }
  bool on_uint64(std::uint64_t, json::string_view, json::error_code& ec) { return Scalar(ec); }
  bool on_double(double, json::string_view, json::error_code& ec) { return Scalar(ec); }
  bool on_bool(bool, json::error_code& ec) { return Scalar(ec); }
  bool on_null(json::error_code& ec) { return Scalar(ec); }
  bool on_comment_part(json::string_view, json::error_code&) { return true; }
  bool on_comment(json::string_view, json::error_code&) { return true; }

 private:
  bool Refuse(json::error_code& ec) {
    not_object = true;
    ec = json::error::syntax;
    return false;
  }
  bool Scalar(json::error_code& ec) {
    if (depth_ == 0) return Refuse(ec);
    if (depth_ == 1) NotString();
    return true;
  }
  void NotString() {
    members.not_strings.insert(key_);
    ResetKey();
  }
  void AppendKey(std::string_view part) {
    if (key_done_) ResetKey();
    if (key_.size() + part.size() <= kMaxMemberBytes) key_.append(part);
    else key_long_ = true;
  }
  void ResetKey() {
    key_.clear();
    key_done_ = false;
    key_long_ = false;
  }
  bool String(std::string_view part, bool last, json::error_code& ec) {
    if (depth_ == 0) return Refuse(ec);
    if (depth_ != 1 || key_long_) {
      if (last && depth_ == 1) ResetKey();
      return true;
    }
    if (key_ == kBase64) {
      const bool first = members.base64_strings == 0;
      if (decode && first && !decode(part)) {
        ec = json::error::syntax;  // not base64: stop here
        return false;
      }
      if (last) {
        ++members.base64_strings;
        ResetKey();
      }
      return true;
    }
    if (value_.size() + part.size() <= kMaxMemberBytes) value_.append(part);
    else value_long_ = true;
    if (last) {
      if (value_long_) members.long_strings.insert(key_);
      else members.strings.insert_or_assign(key_, std::move(value_));
      value_.clear();
      value_long_ = false;
      ResetKey();
    }
    return true;
  }

  int depth_ = 0;
  bool started_ = false;
  std::string key_;
  bool key_done_ = false;
  bool key_long_ = false;
  std::string value_;
  bool value_long_ = false;
};

// Runs `handler` over the body: the file at `path` a chunk at a time, or `text`. False when the
// body is no JSON (or the handler stopped it).
bool Parse(const std::string& path, std::string_view text, MemberHandler& handler_out,
           const std::function<bool(std::string_view)>& decode = {}) {
  json::parse_options options;
  options.max_depth = kMaxJsonDepth;
  json::basic_parser<MemberHandler> parser(options);
  parser.handler().decode = decode;
  json::error_code ec;
  bool ok = true;
  if (path.empty()) {
    ok = parser.write_some(false, text.data(), text.size(), ec) == text.size() && !ec;
  } else {
    std::ifstream in(path, std::ios::binary);
    if (!in) return false;
    std::string chunk(kReadChunk, '\0');
    for (;;) {
      in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
      const auto n = static_cast<std::size_t>(in.gcount());
      const bool more = n == chunk.size();
      const std::size_t used = parser.write_some(more, chunk.data(), n, ec);
      if (ec || used != n) {  // an error, or text after the document
        ok = false;
        break;
      }
      if (!more) break;
    }
  }
  handler_out = std::move(parser.handler());
  return ok && parser.done();
}

}  // namespace

std::optional<JsonFileMembers> ScanJsonFile(const std::string& path, std::string_view text) {
  MemberHandler handler;
  if (!Parse(path, text, handler) || handler.not_object) return std::nullopt;
  return std::move(handler.members);
}

bool DecodeBase64Member(const std::string& path, std::string_view text, const std::string& out_path) {
  std::ofstream out(out_path, std::ios::binary | std::ios::trunc);
  if (!out) throw std::runtime_error("cannot write " + out_path);
  Base64Decoder decoder;
  std::string bytes;
  bool valid = true;
  const auto write = [&] {
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) throw std::runtime_error("cannot write " + out_path);
    bytes.clear();
  };
  MemberHandler handler;
  const bool parsed = Parse(path, text, handler, [&](std::string_view piece) {
    valid = decoder.Add(piece, bytes);
    if (bytes.size() >= kWriteChunk) write();
    return valid;
  });
  if (!parsed || !valid || !decoder.Finish(bytes)) return false;
  write();
  out.close();
  if (!out) throw std::runtime_error("cannot write " + out_path);
  return true;
}

std::optional<std::string> DecodeBase64Member(std::string_view text) {
  Base64Decoder decoder;
  std::string bytes;
  bool valid = true;
  MemberHandler handler;
  const bool parsed = Parse({}, text, handler, [&](std::string_view piece) { return valid = decoder.Add(piece, bytes); });
  if (!parsed || !valid || !decoder.Finish(bytes)) return std::nullopt;
  return bytes;
}

}  // namespace crmd::api
