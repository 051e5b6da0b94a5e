// A SQLite VFS that hands each commit's write-ahead log to the OS in one write, not two per page.
//
// SQLite appends a commit to its log one frame at a time: a 24-byte frame header, then the page,
// each its own pwrite. A group of creates dirties ~30 pages, so ~60 system calls, each entering
// the file system and touching the page cache (a page straddles two OS pages behind its header):
// ~130 us of CPU per commit on the writer's thread, against ~30 us for the same bytes in one call.
// This VFS wraps the default one. For a log file, it keeps appended bytes in a buffer and writes
// them out in one call when anything else happens to that file: the sync of the commit, a read, a
// write elsewhere, a truncate, a size query, a file control or the close. Every other file is the
// default VFS's own, the database file's calls passed on.
//
// Only correct with `PRAGMA synchronous=FULL`: there, SQLite syncs the log before it publishes a
// commit to other connections (the header of the shared index), so no other connection reads a
// frame still in the buffer, and the writer's own reads flush it first. With NORMAL it publishes
// without a sync, and readers would miss frames: Connection uses this VFS for FULL only. Frames a
// transaction wrote early (its pages outgrew the cache) and then rolled back are dropped when the
// connection releases the log's write lock (the database file's ShmLock, which this VFS watches),
// before another connection may append where they would go. A log file without power-safe
// overwrite (SQLite then pads a commit after its sync) is written straight through.
// An error writing the buffer out is returned by the call that wrote it (the sync, for a commit)
// as an I/O error, so SQLite rolls the whole transaction back.
//
// Thread-safe: each file is used by its connection's thread only, as SQLite uses files.
#pragma once

#include <cstdint>

namespace crmd::storage::sqlite {

// The VFS's name for sqlite3_open_v2, registered (not as the default) on first use.
const char* CoalescingVfsName();

// Writes this process has made to log files through the VFS: for tests of the coalescing.
std::uint64_t CoalescedLogWrites();
// Buffered log bytes dropped with a rolled-back transaction: for tests.
std::uint64_t DroppedLogBytes();

}  // namespace crmd::storage::sqlite
