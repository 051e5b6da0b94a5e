// A lock file held for the life of the process (flock): the kernel lets go of it when the process
// ends, however it ends (a crash or SIGKILL included), so a lock is never left behind. Used for
// the slots of servers sharing `--listen` and `--data` (cli/instance_name.hpp) and for the one
// server a SQLite data directory may have (cli/data_dir_lock.hpp).
//
// flock works across hosts on NFSv4 (Linux emulates it with a byte-range lock there).
// Thread-safe (no shared state).
#pragma once

#include <optional>
#include <string>

namespace crmd::cli {

// Locks `path` (made 0600 if missing) and keeps it locked until the process exits: the descriptor
// is deliberately never closed. nullopt when another process holds it. Throws std::system_error
// when the file cannot be opened (no folder, no permission, no descriptor left).
std::optional<int> LockForLife(const std::string& path);

}  // namespace crmd::cli
