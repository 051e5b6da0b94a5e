// The file tools (spec §4.8, §4.10): uploading from an assistant and reading a file's content.
// There is no file deletion tool.
#include <sodium.h>

#include <string>

#include "mcp/tool.hpp"

namespace crmd::mcp {

namespace json = boost::json;

namespace {

// What Get-File-Content returns at most: more does not fit a model's context anyway.
constexpr std::size_t kMaxContent = 5u << 20;
// Base64 Upload-Public-File takes: a 15 MB file (spec §8) and a little more.
constexpr std::size_t kMaxUploadBase64 = 22u << 20;

ToolResult UploadPublicFile(const ToolCall& call, const json::object& args) {
  const std::string_view data = args.at("data").get_string();
  // Spec §4.8: this upload takes plain base64; a Data-URI is the messaging channel's form.
  if (data.starts_with("data:"))
    return ToolResult{"Input validation error: data must be plain base64, without a Data-URI prefix (data:...;base64,)", true};
  std::string bytes(data.size() / 4 * 3 + 3, '\0');
  std::size_t length = 0;
  if (sodium_base642bin(reinterpret_cast<unsigned char*>(bytes.data()), bytes.size(), data.data(), data.size(), " \r\n\t",
                        &length, nullptr, sodium_base64_VARIANT_ORIGINAL) != 0)
    return ToolResult{"Input validation error: data is not valid base64", true};
  bytes.resize(length);
  if (!call.files) return ToolResult{"Files are not available here.", true};
  return Answered(call.files->upload(call.ctx, args.at("name").get_string(), std::move(bytes), true));
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
}

}  // namespace crmd::mcp
