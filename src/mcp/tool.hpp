// An MCP tool (spec §4.10): its name, what a model reads about it, the JSON Schema of its
// arguments, the MCP switch a signed-in user needs for it (§5.6), and what it does. A tool is a
// client of the record API: it re-enters the api/ handlers through `ToolCall::dispatch` with the
// caller's context, so it reads and writes through the same query plan, write pipeline and
// auth::Authorize as any request, and never reaches storage itself.
#pragma once

#include <boost/json.hpp>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "auth/context.hpp"

namespace crmd::mcp {

// The JSON-RPC method that runs a tool, and the tool that creates a row: api/router sends a key
// caller's Create-Data to the write queue, as it does a record API create.
inline constexpr std::string_view kToolsCall = "tools/call";
inline constexpr std::string_view kCreateDataTool = "Create-Data";

// The per-user MCP switches (spec §5.6): which one a tool needs.
enum class Switch { kView, kCreate, kUpdate, kEditPageAndSchema };

// A request below the prefix (`/classes/Tasks?limit=5`), answered with the record API's status and
// JSON body.
using Dispatch = std::function<std::pair<int, boost::json::value>(auth::Context& ctx, std::string_view method,
                                                                  const std::string& target, const boost::json::value* body)>;

// A tool's answer: one text item (JSON, or the error's words when `is_error`).
struct ToolResult {
  std::string text;
  bool is_error = false;
};

// A file's bytes as the file routes serve them to a caller (status 200), or why not.
struct FileBytes {
  int status = 200;
  std::string type;
  std::string bytes;
  std::string error;  // when status is not 200
};

// The file routes (spec §4.8) for tools: the same upload check and download rights as HTTP.
struct FileDoor {
  // Uploads `bytes` as `file_name`, and makes it public (the static host) when `publish`: the
  // upload's answer, `{"url","name"}`, with the public address when published.
  std::function<std::pair<int, boost::json::value>(auth::Context& ctx, std::string_view file_name, std::string bytes,
                                                   bool publish)>
      upload;
  // The file at `address` (a url as an upload or a File value gives it, or a stored name), at most
  // `max_bytes` of it (413 beyond).
  std::function<FileBytes(auth::Context& ctx, std::string_view address, std::size_t max_bytes)> read;
};

// Runs the application's function `name` (a form or a deployed Lua function, spec §4.9) with
// `body` as its caller: the status and JSON body `POST /functions/<appId>/<name>` answers.
using FunctionRunner =
    std::function<std::pair<int, boost::json::value>(auth::Context& ctx, std::string_view name, const boost::json::object& body)>;

// The same, answering the record API's body as text, for answers a tool passes on as they are.
using DispatchText = std::function<std::pair<int, std::string>(auth::Context& ctx, std::string_view method,
                                                               const std::string& target, const boost::json::value* body)>;

struct ToolCall {
  auth::Context& ctx;
  const Dispatch& dispatch;
  // The record API's path prefix (`core`): batch items name whole paths.
  std::string_view prefix;
  const FileDoor* files = nullptr;
  // A signed-in user's MCP switches (`mcp:view`, ...); null for a key, which needs none.
  const std::vector<std::string>* switches = nullptr;
  const FunctionRunner* functions = nullptr;
  const DispatchText* dispatch_text = nullptr;

  // `dispatch` with ctx.
  std::pair<int, boost::json::value> Send(std::string_view method, const std::string& target,
                                          const boost::json::value* body = nullptr) const {
    return dispatch(ctx, method, target, body);
  }
  // A read whose answer the tool returns as is: the handler's text, not parsed and written again.
  ToolResult Relay(const std::string& target) const;
};

struct Tool {
  std::string_view name;
  std::string_view title;
  std::string_view description;
  boost::json::object input_schema;
  Switch needs = Switch::kView;
  bool read_only = true;
  std::function<ToolResult(const ToolCall& call, const boost::json::object& arguments)> run;
};

// Every tool, in the order tools/list answers them. Built once; thread-safe to read.
const std::vector<Tool>& Catalogue();
// The tool named `name`, or null.
const Tool* FindTool(std::string_view name);

// The catalogue's parts, one per family of tools (record_tools.cpp, schema_tools.cpp, ...).
void AddRecordTools(std::vector<Tool>& tools);
void AddSchemaTools(std::vector<Tool>& tools);
void AddUserTools(std::vector<Tool>& tools);
void AddFileTools(std::vector<Tool>& tools);
void AddRelationTools(std::vector<Tool>& tools);
void AddHistoryTools(std::vector<Tool>& tools);
void AddCrmTools(std::vector<Tool>& tools);
void AddAppTools(std::vector<Tool>& tools);

// A dispatched answer as a tool's result: the JSON body on success, the error's text otherwise
// (`Permission denied for action find on class Contacts`).
ToolResult Answered(const std::pair<int, boost::json::value>& answer);
// A dispatched answer given as text: passed on as is on success.
ToolResult AnsweredText(std::pair<int, std::string> answer);
// `value` as a successful result.
ToolResult Json(const boost::json::value& value);

// Paths and values tools build requests with.
// `/classes/<table>[/<objectId>]`, encoded.
std::string ClassPath(std::string_view table, std::string_view object_id = {});
// `&where=<value>`, encoded.
std::string WhereParam(const boost::json::value& where);
// The call's `limit` argument (its schema bounds it), or `fallback` without one.
std::int64_t LimitOf(const boost::json::object& args, std::int64_t fallback);
boost::json::object PointerTo(std::string_view table, std::string_view object_id);
boost::json::object DateValue(std::string_view iso);
// Spec §5.3: the change history and the logs are read-only through every tool, even with a key.
bool IsReadOnlyTable(std::string_view table);
// The refusal of a write to a read-only table.
ToolResult ReadOnly(std::string_view action, std::string_view table);
// Whether the caller may do what `needed` opens (a key may do all; a user needs the switch).
bool HasSwitch(const ToolCall& call, std::string_view needed);

}  // namespace crmd::mcp
