// One `crmd serve` per SQLite data directory (issue 35): a second server on the same `--data`
// would open the same store files with a second writer, cache and checkpointer of its own, and
// each would hand out the other's uploads folder and mail outbox. The server holds
// `DATA/serve.lock` locked (cli/file_lock.hpp) for as long as it runs; the file holds its pid,
// which a refused server names. Servers on a PostgreSQL `--store` share `--data` (for files) and
// take no such lock.
//
// Not thread-safe: called once, at start.
#pragma once

#include <optional>
#include <string>

namespace crmd::cli {

// Takes the lock of `data_dir` (made if missing) for the life of the process; what stops it, in
// a sentence for the person who started the server, otherwise.
std::optional<std::string> LockDataDir(const std::string& data_dir);

// The lock file's name in a data directory.
inline constexpr const char* kServeLockFile = "serve.lock";

}  // namespace crmd::cli
