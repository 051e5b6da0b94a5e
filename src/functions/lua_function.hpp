// Operator-deployed functions (spec §4.9): Lua 5.4, sandboxed. A call gets a fresh interpreter
// without io, os, package, debug or any way to load bytecode, a memory cap and an instruction
// budget; it reads and writes through the `crm` API, which re-enters the record API (DESIGN.md:
// one door for every read and write). docs/FUNCTIONS.md documents the API.
#pragma once

#include <boost/json.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "util/result.hpp"

namespace crmd::functions {

struct LuaLimits {
  // The interpreter's heap, and what converting its values to JSON makes (the answer, the bodies
  // of crm calls).
  std::size_t memory_bytes = 64u << 20;
  std::int64_t instructions = 10'000'000;    // Lua VM instructions per call (~0.1 s)
  // Wall time per call, whatever it does: VM instructions, library calls (pattern matching,
  // sorting), coroutines, and the crm calls' reads (issue 31 #4).
  std::chrono::milliseconds time{1'000};
};

// What a function's `crm` calls reach. `method` GET, POST or PUT; `target` a path below the prefix
// with its query (`/classes/Tasks?where=...`); `body` for writes. Answers the status and the JSON
// text the record API answers (parsed by the call, within its memory cap).
struct LuaHost {
  std::function<std::pair<int, std::string>(std::string_view method, const std::string& target,
                                            const boost::json::value* body)>
      dispatch;
  std::function<bool(std::string_view flag)> config_flag;
  std::function<void(std::string_view message)> log;
};

// Compiles `code` without running it: nullopt, or what is wrong (for `crmd function deploy`).
std::optional<std::string> CheckLua(std::string_view name, std::string_view code);

// Runs function `name`: the chunk `code` with the global `request` ({body=..., record=...}); its
// return value is the 200 answer (nil: `{}`). `error({status=..., error=...})`, or a failed `crm`
// call nobody caught, answers that status and `{"error": ...}`; any other error, the memory cap,
// the instruction budget or the time limit answers 500 (the cause in a log line via `host.log`).
// Throws what a `crm` call's store threw (StoreUnavailable, ...), once the interpreter is closed.
Result<boost::json::value> RunLua(std::string_view name, std::string_view code, const boost::json::object& body,
                                  const boost::json::value* record, const LuaLimits& limits, const LuaHost& host);

}  // namespace crmd::functions
