#include "storage/sqlite/coalescing_vfs.hpp"

#include <sqlite3.h>

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "storage/database.hpp"

namespace crmd::storage::sqlite {

namespace {

constexpr const char* kName = "crmd-coalescing";
// Log bytes a file holds before writing them out (30 frames of 4 KiB pages, about one commit group
// of creates): the most one write of the unix VFS takes, which masks a length to 17 bits (128 KiB
// less a byte). A longer commit goes out in writes of this size, 60 system calls fewer each.
constexpr int kBufferBytes = 124 * 1024;

sqlite3_vfs* g_base = nullptr;  // the default VFS, which does all the work
sqlite3_vfs g_vfs;
std::atomic<std::uint64_t> g_log_writes{0};

struct DbFile;

// A log file: the default VFS's file lives in the same allocation, right after this.
struct LogFile {
  sqlite3_file base;  // first: SQLite uses a LogFile as a sqlite3_file
  sqlite3_file* real;
  DbFile* db;           // the database file of the same connection; guarded by Files().mutex
  bool buffered;        // false: every write goes straight through
  char* buffer;         // kBufferBytes, allocated at the first append
  int used;             // bytes waiting in `buffer`
  sqlite3_int64 start;  // the file offset they go to
};

// A database file: the default VFS's, with one call watched (ShmLock).
struct DbFile {
  sqlite3_file base;
  sqlite3_file* real;
  const char* name;  // as SQLite opened it: the key in Files().by_name
  LogFile* log;      // guarded by Files().mutex
};

constexpr std::size_t Aligned(std::size_t n) {
  return (n + alignof(std::max_align_t) - 1) / alignof(std::max_align_t) * alignof(std::max_align_t);
}
constexpr std::size_t kRealOffset = Aligned(sizeof(LogFile) > sizeof(DbFile) ? sizeof(LogFile) : sizeof(DbFile));

// Open database files by the name pointer SQLite gave their xOpen: for a log file,
// sqlite3_filename_database() returns that same pointer, which ties the two files of a connection.
// Never destroyed: a connection may close during static destruction.
struct OpenFiles {
  std::mutex mutex;
  std::unordered_map<const char*, DbFile*> by_name;
};
OpenFiles& Files() {
  static auto* files = new OpenFiles;
  return *files;
}
std::atomic<std::uint64_t> g_bytes_dropped{0};

LogFile* Log(sqlite3_file* file) { return reinterpret_cast<LogFile*>(file); }
DbFile* Db(sqlite3_file* file) { return reinterpret_cast<DbFile*>(file); }
template <typename File>
const sqlite3_io_methods* Real(const File* f) {
  return f->real->pMethods;
}

// Calls passed on as they are to the default VFS's file, for either wrapper.
template <typename File>
struct Pass {
  static File* F(sqlite3_file* file) { return reinterpret_cast<File*>(file); }
  static int Read(sqlite3_file* file, void* out, int amount, sqlite3_int64 offset) {
    return Real(F(file))->xRead(F(file)->real, out, amount, offset);
  }
  static int Write(sqlite3_file* file, const void* data, int amount, sqlite3_int64 offset) {
    return Real(F(file))->xWrite(F(file)->real, data, amount, offset);
  }
  static int Truncate(sqlite3_file* file, sqlite3_int64 size) { return Real(F(file))->xTruncate(F(file)->real, size); }
  static int Sync(sqlite3_file* file, int flags) { return Real(F(file))->xSync(F(file)->real, flags); }
  static int FileSize(sqlite3_file* file, sqlite3_int64* size) {
    return Real(F(file))->xFileSize(F(file)->real, size);
  }
  static int Lock(sqlite3_file* file, int level) { return Real(F(file))->xLock(F(file)->real, level); }
  static int Unlock(sqlite3_file* file, int level) { return Real(F(file))->xUnlock(F(file)->real, level); }
  static int CheckReservedLock(sqlite3_file* file, int* out) {
    return Real(F(file))->xCheckReservedLock(F(file)->real, out);
  }
  static int FileControl(sqlite3_file* file, int op, void* arg) {
    return Real(F(file))->xFileControl(F(file)->real, op, arg);
  }
  static int SectorSize(sqlite3_file* file) { return Real(F(file))->xSectorSize(F(file)->real); }
  static int DeviceCharacteristics(sqlite3_file* file) {
    return Real(F(file))->xDeviceCharacteristics(F(file)->real);
  }
  static int ShmMap(sqlite3_file* file, int region, int size, int extend, void volatile** out) {
    return Real(F(file))->xShmMap(F(file)->real, region, size, extend, out);
  }
  static int ShmLock(sqlite3_file* file, int offset, int n, int flags) {
    return Real(F(file))->xShmLock(F(file)->real, offset, n, flags);
  }
  static void ShmBarrier(sqlite3_file* file) { Real(F(file))->xShmBarrier(F(file)->real); }
  static int ShmUnmap(sqlite3_file* file, int remove) { return Real(F(file))->xShmUnmap(F(file)->real, remove); }
  static int Fetch(sqlite3_file* file, sqlite3_int64 offset, int amount, void** out) {
    return Real(F(file))->xFetch(F(file)->real, offset, amount, out);
  }
  static int Unfetch(sqlite3_file* file, sqlite3_int64 offset, void* page) {
    return Real(F(file))->xUnfetch(F(file)->real, offset, page);
  }
};

int WriteThrough(LogFile* f, const void* data, int amount, sqlite3_int64 offset) {
  g_log_writes.fetch_add(1, std::memory_order_relaxed);
  return Real(f)->xWrite(f->real, data, amount, offset);
}

// A failed write of buffered frames is reported as an I/O error whatever its cause: for SQLITE_FULL
// met in a read, SQLite would roll back only the statement, and a later COMMIT could then publish a
// log missing frames of earlier statements; an I/O error rolls back the whole transaction.
int Flush(LogFile* f) {
  if (f->used == 0) return SQLITE_OK;
  const int amount = f->used;
  f->used = 0;
  return WriteThrough(f, f->buffer, amount, f->start) == SQLITE_OK ? SQLITE_OK : SQLITE_IOERR_WRITE;
}

int Close(sqlite3_file* file) {
  LogFile* f = Log(file);
  {
    std::lock_guard lock(Files().mutex);
    if (f->db) f->db->log = nullptr;
    f->db = nullptr;
  }
  const int flushed = Flush(f);
  const int closed = Real(f)->xClose(f->real);
  std::free(f->buffer);
  f->buffer = nullptr;
  return flushed != SQLITE_OK ? flushed : closed;
}

int Read(sqlite3_file* file, void* out, int amount, sqlite3_int64 offset) {
  LogFile* f = Log(file);
  if (const int rc = Flush(f); rc != SQLITE_OK) return rc;
  return Real(f)->xRead(f->real, out, amount, offset);
}

int Write(sqlite3_file* file, const void* data, int amount, sqlite3_int64 offset) {
  LogFile* f = Log(file);
  if (!f->buffered) return WriteThrough(f, data, amount, offset);
  if (f->used > 0 && offset == f->start + f->used && f->used + amount <= kBufferBytes) {
    std::memcpy(f->buffer + f->used, data, static_cast<std::size_t>(amount));
    f->used += amount;
    return SQLITE_OK;
  }
  if (const int rc = Flush(f); rc != SQLITE_OK) return rc;
  if (!f->buffer) f->buffer = static_cast<char*>(std::malloc(kBufferBytes));
  if (!f->buffer || amount > kBufferBytes) return WriteThrough(f, data, amount, offset);
  std::memcpy(f->buffer, data, static_cast<std::size_t>(amount));
  f->used = amount;
  f->start = offset;
  return SQLITE_OK;
}

int Truncate(sqlite3_file* file, sqlite3_int64 size) {
  LogFile* f = Log(file);
  if (const int rc = Flush(f); rc != SQLITE_OK) return rc;
  return Real(f)->xTruncate(f->real, size);
}

int Sync(sqlite3_file* file, int flags) {
  LogFile* f = Log(file);
  if (const int rc = Flush(f); rc != SQLITE_OK) return rc;
  return Real(f)->xSync(f->real, flags);
}

int FileSize(sqlite3_file* file, sqlite3_int64* size) {
  LogFile* f = Log(file);
  if (const int rc = Flush(f); rc != SQLITE_OK) return rc;
  return Real(f)->xFileSize(f->real, size);
}

int FileControl(sqlite3_file* file, int op, void* arg) {
  LogFile* f = Log(file);
  if (const int rc = Flush(f); rc != SQLITE_OK) return rc;
  return Real(f)->xFileControl(f->real, op, arg);
}

int Fetch(sqlite3_file* file, sqlite3_int64 offset, int amount, void** out) {
  LogFile* f = Log(file);
  if (const int rc = Flush(f); rc != SQLITE_OK) return rc;
  return Real(f)->xFetch(f->real, offset, amount, out);
}

// The calls that touch the log's bytes write the buffer out first; a log file has no shared
// memory, and the other calls change nothing in it.
using PassLog = Pass<LogFile>;
const sqlite3_io_methods kLogMethods = {
    3,
    Close,
    Read,
    Write,
    Truncate,
    Sync,
    FileSize,
    PassLog::Lock,
    PassLog::Unlock,
    PassLog::CheckReservedLock,
    FileControl,
    PassLog::SectorSize,
    PassLog::DeviceCharacteristics,
    PassLog::ShmMap,
    PassLog::ShmLock,
    PassLog::ShmBarrier,
    PassLog::ShmUnmap,
    Fetch,
    PassLog::Unfetch,
};

// A database file passes every call on; releasing the log's write lock (SQLite's WAL_WRITE_LOCK, slot
// 0) also empties its connection's log buffer first. A commit's frames left the buffer at its sync;
// frames still in it belong to a transaction rolled back after they spilled, and written later they
// would land on whatever another connection appends there meanwhile.
int DbShmLock(sqlite3_file* file, int offset, int n, int flags) {
  DbFile* f = Db(file);
  if (offset == 0 && n == 1 && flags == (SQLITE_SHM_UNLOCK | SQLITE_SHM_EXCLUSIVE)) {
    std::lock_guard lock(Files().mutex);
    if (f->log) {
      g_bytes_dropped.fetch_add(static_cast<std::uint64_t>(f->log->used), std::memory_order_relaxed);
      f->log->used = 0;
    }
  }
  return Real(f)->xShmLock(f->real, offset, n, flags);
}

int DbClose(sqlite3_file* file) {
  DbFile* f = Db(file);
  {
    std::lock_guard lock(Files().mutex);
    if (f->log) f->log->db = nullptr;
    Files().by_name.erase(f->name);
  }
  return Real(f)->xClose(f->real);
}
using PassDb = Pass<DbFile>;
const sqlite3_io_methods kDbMethods = {
    3,
    DbClose,
    PassDb::Read,
    PassDb::Write,
    PassDb::Truncate,
    PassDb::Sync,
    PassDb::FileSize,
    PassDb::Lock,
    PassDb::Unlock,
    PassDb::CheckReservedLock,
    PassDb::FileControl,
    PassDb::SectorSize,
    PassDb::DeviceCharacteristics,
    PassDb::ShmMap,
    DbShmLock,
    PassDb::ShmBarrier,
    PassDb::ShmUnmap,
    PassDb::Fetch,
    PassDb::Unfetch,
};

// Opens the default VFS's file after `header` bytes of `file`; false (and nothing left open) when
// it fails or lacks the version-3 methods the wrappers call.
bool OpenReal(const char* name, sqlite3_file* file, sqlite3_file* real, int flags, int* out_flags, int& rc) {
  rc = g_base->xOpen(g_base, name, real, flags, out_flags);
  // SQLite closes only a file whose methods are set; a failed open leaves the real one's unset.
  const bool usable = rc == SQLITE_OK && real->pMethods && real->pMethods->iVersion >= 3;
  if (rc == SQLITE_OK && !usable && real->pMethods) real->pMethods->xClose(real);
  if (!usable) {
    file->pMethods = nullptr;
    if (rc == SQLITE_OK) rc = SQLITE_CANTOPEN;
  }
  return usable;
}

int Open(sqlite3_vfs*, const char* name, sqlite3_file* file, int flags, int* out_flags) {
  auto* real = reinterpret_cast<sqlite3_file*>(reinterpret_cast<char*>(file) + kRealOffset);
  int rc = SQLITE_OK;
  if (flags & SQLITE_OPEN_MAIN_DB) {
    DbFile* f = Db(file);
    f->real = real;
    f->name = name;
    f->log = nullptr;
    if (!OpenReal(name, file, real, flags, out_flags, rc)) return rc;
    try {
      std::lock_guard lock(Files().mutex);
      Files().by_name[name] = f;
    } catch (const std::exception&) {  // no memory: SQLite's own code for it, nothing left open
      real->pMethods->xClose(real);
      file->pMethods = nullptr;
      return SQLITE_NOMEM;
    }
    f->base.pMethods = &kDbMethods;
    return SQLITE_OK;
  }
  if (!(flags & SQLITE_OPEN_WAL)) return g_base->xOpen(g_base, name, file, flags, out_flags);
  LogFile* f = Log(file);
  f->real = real;
  f->db = nullptr;
  f->buffer = nullptr;
  f->used = 0;
  f->start = 0;
  if (!OpenReal(name, file, real, flags, out_flags, rc)) return rc;
  // Without power-safe overwrite SQLite pads a commit to a sector after its sync, and would publish
  // frames still in the buffer: such a file is written straight through.
  f->buffered = (Real(f)->xDeviceCharacteristics(real) & SQLITE_IOCAP_POWERSAFE_OVERWRITE) != 0;
  {
    std::lock_guard lock(Files().mutex);
    if (auto db = Files().by_name.find(sqlite3_filename_database(name)); db != Files().by_name.end()) {
      f->db = db->second;
      db->second->log = f;
    }
  }
  // A log whose database file is not known here could not drop a rolled-back transaction's frames.
  if (!f->db) f->buffered = false;
  f->base.pMethods = &kLogMethods;
  return SQLITE_OK;
}

// Everything else is the default VFS's.
int Delete(sqlite3_vfs*, const char* name, int sync_dir) { return g_base->xDelete(g_base, name, sync_dir); }
int Access(sqlite3_vfs*, const char* name, int flags, int* out) { return g_base->xAccess(g_base, name, flags, out); }
int FullPathname(sqlite3_vfs*, const char* name, int size, char* out) {
  return g_base->xFullPathname(g_base, name, size, out);
}
void* DlOpen(sqlite3_vfs*, const char* name) { return g_base->xDlOpen(g_base, name); }
void DlError(sqlite3_vfs*, int size, char* out) { g_base->xDlError(g_base, size, out); }
void (*DlSym(sqlite3_vfs*, void* handle, const char* symbol))(void) { return g_base->xDlSym(g_base, handle, symbol); }
void DlClose(sqlite3_vfs*, void* handle) { g_base->xDlClose(g_base, handle); }
int Randomness(sqlite3_vfs*, int size, char* out) { return g_base->xRandomness(g_base, size, out); }
int Sleep(sqlite3_vfs*, int micros) { return g_base->xSleep(g_base, micros); }
int CurrentTime(sqlite3_vfs*, double* out) { return g_base->xCurrentTime(g_base, out); }
int GetLastError(sqlite3_vfs*, int size, char* out) { return g_base->xGetLastError(g_base, size, out); }
int CurrentTimeInt64(sqlite3_vfs*, sqlite3_int64* out) { return g_base->xCurrentTimeInt64(g_base, out); }
int SetSystemCall(sqlite3_vfs*, const char* name, sqlite3_syscall_ptr call) {
  return g_base->xSetSystemCall(g_base, name, call);
}
sqlite3_syscall_ptr GetSystemCall(sqlite3_vfs*, const char* name) { return g_base->xGetSystemCall(g_base, name); }
const char* NextSystemCall(sqlite3_vfs*, const char* name) { return g_base->xNextSystemCall(g_base, name); }

void Register() {
  g_base = sqlite3_vfs_find(nullptr);
  // The forwarding above calls the version-3 methods (the unix VFS's) unchecked.
  if (!g_base || g_base->iVersion < 3) throw StorageError("sqlite: the default VFS is older than version 3");
  g_vfs = sqlite3_vfs{};
  g_vfs.iVersion = 3;
  g_vfs.szOsFile = static_cast<int>(kRealOffset) + g_base->szOsFile;
  g_vfs.mxPathname = g_base->mxPathname;
  g_vfs.zName = kName;
  g_vfs.xOpen = Open;
  g_vfs.xDelete = Delete;
  g_vfs.xAccess = Access;
  g_vfs.xFullPathname = FullPathname;
  g_vfs.xDlOpen = DlOpen;
  g_vfs.xDlError = DlError;
  g_vfs.xDlSym = DlSym;
  g_vfs.xDlClose = DlClose;
  g_vfs.xRandomness = Randomness;
  g_vfs.xSleep = Sleep;
  g_vfs.xCurrentTime = CurrentTime;
  g_vfs.xGetLastError = GetLastError;
  g_vfs.xCurrentTimeInt64 = CurrentTimeInt64;
  g_vfs.xSetSystemCall = SetSystemCall;
  g_vfs.xGetSystemCall = GetSystemCall;
  g_vfs.xNextSystemCall = NextSystemCall;
  if (sqlite3_vfs_register(&g_vfs, /*makeDflt=*/0) != SQLITE_OK) throw StorageError("sqlite: cannot register the VFS");
}

}  // namespace

const char* CoalescingVfsName() {
  static std::once_flag once;
  std::call_once(once, Register);
  return kName;
}

std::uint64_t CoalescedLogWrites() { return g_log_writes.load(std::memory_order_relaxed); }

std::uint64_t DroppedLogBytes() { return g_bytes_dropped.load(std::memory_order_relaxed); }

}  // namespace crmd::storage::sqlite
