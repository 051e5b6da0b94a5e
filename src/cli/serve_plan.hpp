// What `crmd serve`'s flags make of the server: every flag checked and turned into the options of
// the parts main.cpp composes, with the defaults that follow the machine (cores, the open-file
// limit). Setting the plan up also tunes the process: malloc's arenas, the open-file limit, the
// password gate and the test clock (CRMD_TEST_CLOCK_OFFSET_MS).
//
// Not thread-safe: called once, before any thread starts.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>

#include "api/router.hpp"
#include "app/application.hpp"
#include "app/function_pool.hpp"
#include "cli/command_line.hpp"
#include "cli/memory_trim.hpp"
#include "files/upload_area.hpp"
#include "http/server.hpp"
#include "logs/request_log.hpp"
#include "triggers/runner.hpp"

namespace crmd::cli {

struct ServePlan {
  http::ServerOptions server;
  app::StoreOptions stores;
  app::Settings settings;
  api::RouterOptions router;  // all but its function pool, which main.cpp makes
  app::FunctionPool::Options functions;
  triggers::Runner::Options triggers;
  logs::RequestLog::Options request_log;
  std::uint64_t open_files = 0;  // the process's limit, once raised
  std::optional<http::ServerOptions> metrics;  // the /metrics listener (--metrics-listen), if any
  std::optional<files::UploadArea> uploads;  // held for the process's life: server.upload_dir
  std::unique_ptr<MemoryTrim> memory_trim;   // its thread runs while the plan lives
};

// The plan, or what is wrong with the flags, in words for the person who typed them.
std::variant<ServePlan, std::string> PlanServe(const ServeFlags& flags);

// The process's open-file limit now (after PlanServe: raised to the hard limit).
std::uint64_t OpenFileLimit();

}  // namespace crmd::cli
