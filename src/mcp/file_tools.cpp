// The file tools (spec §4.8, §4.10): uploading from an assistant and reading a file's content.
// There is no file deletion tool.
#include <sodium.h>

#include <string>
#include <variant>

#include "mcp/tool.hpp"
#include "util/base64.hpp"
#include "util/strings.hpp"

namespace crmd::mcp {

namespace json = boost::json;

namespace {

// What Get-File-Content returns at most: more does not fit a model's context anyway.
constexpr std::size_t kMaxContent = 5u << 20;
// Base64 Upload-Public-File takes: a 15 MB file (spec §8) and a little more.
constexpr std::size_t kMaxUploadBase64 = 22u << 20;

// The bytes of a tool's plain base64 `data`, or the refusal.
std::variant<std::string, ToolResult> Decoded(std::string_view data) {
  // Spec §4.8: this upload takes plain base64; a Data-URI is the messaging channel's form.
  if (data.starts_with("data:"))
    return ToolResult{"Input validation error: data must be plain base64, without a Data-URI prefix (data:...;base64,)", true};
  auto bytes = DecodeBase64(data);
  if (!bytes) return ToolResult{"Input validation error: data is not valid base64", true};
  return std::move(*bytes);
}

ToolResult UploadPublicFile(const ToolCall& call, const json::object& args) {
  auto bytes = Decoded(args.at("data").get_string());
  if (auto* refused = std::get_if<ToolResult>(&bytes)) return *refused;
  if (!call.files) return ToolResult{"Files are not available here.", true};
  return Answered(call.files->upload(call.ctx, args.at("name").get_string(), std::move(std::get<std::string>(bytes)), true));
}

// Uploads, then attaches to a PrivateFile field of a record: the file is then served only to whom
// may read that record.
ToolResult UploadPrivateFile(const ToolCall& call, const json::object& args) {
  auto bytes = Decoded(args.at("data").get_string());
  if (auto* refused = std::get_if<ToolResult>(&bytes)) return *refused;
  if (!call.files) return ToolResult{"Files are not available here.", true};
  const std::string_view table = args.at("table").get_string();
  const std::string_view id = args.at("objectId").get_string();
  const std::string field(args.at("field").get_string());
  // The record first: no upload for a record the caller may not change.
  auto record = call.Send("GET", ClassPath(table, id) + "?keys=objectId");
  if (record.first >= 400) return Answered(record);
  auto uploaded = call.files->upload(call.ctx, args.at("name").get_string(), std::move(std::get<std::string>(bytes)), false);
  if (uploaded.first >= 400 || !uploaded.second.is_object()) return Answered(uploaded);
  const json::object& file = uploaded.second.get_object();
  const json::value change = json::object{{field, json::object{{"__type", "File"}, {"name", file.at("name")}, {"url", file.at("url")}}}};
  auto attached = call.Send("PUT", ClassPath(table, id), &change);
  if (attached.first >= 400) return Answered(attached);
  auto stored = call.Send("GET", ClassPath(table, id) + "?keys=" + PercentEncode(field));
  if (stored.first >= 400 || !stored.second.is_object()) return Answered(stored);
  return Json(json::object{{field, stored.second.get_object()[field]}});
}

bool IsText(std::string_view type) { return type.starts_with("text/"); }

ToolResult GetFileContent(const ToolCall& call, const json::object& args) {
  if (!call.files) return ToolResult{"Files are not available here.", true};
  const std::string_view address = args.at("url").get_string();
  FileBytes file = call.files->read(call.ctx, address, kMaxContent);
  if (file.status != 200) return ToolResult{file.error, true};
  json::object out{{"mimeType", file.type}, {"size", file.bytes.size()}};
  if (IsText(file.type)) {
    out["text"] = file.bytes;
  } else {
    std::string encoded(sodium_base64_ENCODED_LEN(file.bytes.size(), sodium_base64_VARIANT_ORIGINAL), '\0');
    sodium_bin2base64(encoded.data(), encoded.size(), reinterpret_cast<const unsigned char*>(file.bytes.data()),
                      file.bytes.size(), sodium_base64_VARIANT_ORIGINAL);
    encoded.resize(encoded.size() - 1);  // the terminating NUL
    out["base64"] = std::move(encoded);
  }
  return ToolResult{json::serialize(out), false};
}

}  // namespace

void AddFileTools(std::vector<Tool>& tools) {
  tools.push_back(Tool{
      "Upload-Public-File", "Upload a public file",
      "Uploads a file given as plain base64 (no \"data:...;base64,\" prefix) under `name` (with its "
      "extension: the content must be of that type; images, PDF, office documents, archives, audio, video, "
      "text and CSV are accepted). The file is public: anyone with the returned `url` can open it. Returns "
      "{\"name\",\"url\"}; attach it to a record as {\"__type\":\"File\",\"name\":...,\"url\":...}.",
      json::object{{"type", "object"},
                   {"properties", json::object{{"name", json::object{{"type", "string"}, {"minLength", 1}, {"maxLength", 222},
                                                                     {"description", "The file's name with its extension, e.g. quote.pdf."}}},
                                               {"data", json::object{{"type", "string"}, {"minLength", 1}, {"maxLength", kMaxUploadBase64},
                                                                     {"description", "The file's bytes in base64."}}}}},
                   {"required", json::array{"name", "data"}},
                   {"additionalProperties", false}},
      Switch::kCreate, false, UploadPublicFile});
  tools.push_back(Tool{
      "Get-File-Content", "Read a file",
      "Reads a stored file by its url (as a File value or an upload gives it). Text files come back as "
      "`text`, others as `base64`, with `mimeType` and `size`. Private files follow the record's "
      "permissions. At most 5 MB.",
      json::object{{"type", "object"},
                   {"properties", json::object{{"url", json::object{{"type", "string"}, {"minLength", 1}, {"maxLength", 4096},
                                                                    {"description", "The file's url."}}}}},
                   {"required", json::array{"url"}},
                   {"additionalProperties", false}},
      Switch::kView, true, GetFileContent});
  tools.push_back(Tool{
      "Upload-Private-File", "Upload a private file to a record",
      "Uploads a file (plain base64, its type checked like Upload-Public-File's) and attaches it to a "
      "PrivateFile field of one record (e.g. Notes.File). It is then served only to whom may read that "
      "record. Returns the field's value with its private url.",
      json::object{{"type", "object"},
                   {"properties",
                    json::object{{"table", json::object{{"type", "string"}, {"minLength", 1}, {"maxLength", 128}, {"description", "The record's table."}}},
                                 {"objectId", json::object{{"type", "string"}, {"minLength", 1}, {"maxLength", 64}, {"description", "The record's objectId."}}},
                                 {"field", json::object{{"type", "string"}, {"minLength", 1}, {"maxLength", 128}, {"description", "The PrivateFile field."}}},
                                 {"name", json::object{{"type", "string"}, {"minLength", 1}, {"maxLength", 222}, {"description", "The file's name with its extension."}}},
                                 {"data", json::object{{"type", "string"}, {"minLength", 1}, {"maxLength", kMaxUploadBase64}, {"description", "The file's bytes in base64."}}}}},
                   {"required", json::array{"table", "objectId", "field", "name", "data"}},
                   {"additionalProperties", false}},
      Switch::kUpdate, false, UploadPrivateFile});
}

}  // namespace crmd::mcp
