// How durable a store's commits are, chosen when it is opened (OpenSqlite, the server's options).
#pragma once

namespace crmd::storage {

enum class Durability {
  kFull,    // a commit is on disk before it returns (fsync of the log on every commit)
  kNormal,  // survives a process crash; the last commits may be lost on power failure
};

}  // namespace crmd::storage
