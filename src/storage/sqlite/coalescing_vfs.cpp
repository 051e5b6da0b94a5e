#include "storage/sqlite/coalescing_vfs.hpp"

#include <sqlite3.h>

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <mutex>

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

// A log file: the default VFS's file lives in the same allocation, right after this.
struct LogFile {
  sqlite3_file base;  // first: SQLite uses a LogFile as a sqlite3_file
  sqlite3_file* real;
  char* buffer;         // kBufferBytes, allocated at the first append
  int used;             // bytes waiting in `buffer`
  sqlite3_int64 start;  // the file offset they go to
};

constexpr std::size_t kRealOffset =
    (sizeof(LogFile) + alignof(std::max_align_t) - 1) / alignof(std::max_align_t) * alignof(std::max_align_t);

LogFile* Log(sqlite3_file* file) { return reinterpret_cast<LogFile*>(file); }
const sqlite3_io_methods* Real(const LogFile* f) { return f->real->pMethods; }

int WriteThrough(LogFile* f, const void* data, int amount, sqlite3_int64 offset) {
  g_log_writes.fetch_add(1, std::memory_order_relaxed);
  return Real(f)->xWrite(f->real, data, amount, offset);
}

int Flush(LogFile* f) {
  if (f->used == 0) return SQLITE_OK;
  const int amount = f->used;
  f->used = 0;
  return WriteThrough(f, f->buffer, amount, f->start);
}

int Close(sqlite3_file* file) {
  LogFile* f = Log(file);
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

int Lock(sqlite3_file* file, int level) { return Real(Log(file))->xLock(Log(file)->real, level); }
int Unlock(sqlite3_file* file, int level) { return Real(Log(file))->xUnlock(Log(file)->real, level); }
int CheckReservedLock(sqlite3_file* file, int* out) {
  return Real(Log(file))->xCheckReservedLock(Log(file)->real, out);
}

int FileControl(sqlite3_file* file, int op, void* arg) {
  LogFile* f = Log(file);
  if (const int rc = Flush(f); rc != SQLITE_OK) return rc;
  return Real(f)->xFileControl(f->real, op, arg);
}

int SectorSize(sqlite3_file* file) { return Real(Log(file))->xSectorSize(Log(file)->real); }
int DeviceCharacteristics(sqlite3_file* file) {
  return Real(Log(file))->xDeviceCharacteristics(Log(file)->real);
}

// A log file has no shared memory and is not memory-mapped; these only pass the calls on.
int ShmMap(sqlite3_file* file, int region, int size, int extend, void volatile** out) {
  return Real(Log(file))->xShmMap(Log(file)->real, region, size, extend, out);
}
int ShmLock(sqlite3_file* file, int offset, int n, int flags) {
  return Real(Log(file))->xShmLock(Log(file)->real, offset, n, flags);
}
void ShmBarrier(sqlite3_file* file) { Real(Log(file))->xShmBarrier(Log(file)->real); }
int ShmUnmap(sqlite3_file* file, int remove) { return Real(Log(file))->xShmUnmap(Log(file)->real, remove); }
int Fetch(sqlite3_file* file, sqlite3_int64 offset, int amount, void** out) {
  LogFile* f = Log(file);
  if (const int rc = Flush(f); rc != SQLITE_OK) return rc;
  return Real(f)->xFetch(f->real, offset, amount, out);
}
int Unfetch(sqlite3_file* file, sqlite3_int64 offset, void* page) {
  return Real(Log(file))->xUnfetch(Log(file)->real, offset, page);
}

const sqlite3_io_methods kLogMethods = {
    3,           Close,      Read,     Write,    Truncate,          Sync,
    FileSize,    Lock,       Unlock,   CheckReservedLock, FileControl, SectorSize,
    DeviceCharacteristics,   ShmMap,   ShmLock,  ShmBarrier,        ShmUnmap,    Fetch,
    Unfetch,
};

int Open(sqlite3_vfs*, const char* name, sqlite3_file* file, int flags, int* out_flags) {
  if (!(flags & SQLITE_OPEN_WAL)) return g_base->xOpen(g_base, name, file, flags, out_flags);
  LogFile* f = Log(file);
  f->real = reinterpret_cast<sqlite3_file*>(reinterpret_cast<char*>(file) + kRealOffset);
  f->buffer = nullptr;
  f->used = 0;
  f->start = 0;
  const int rc = g_base->xOpen(g_base, name, f->real, flags, out_flags);
  // SQLite closes only a file whose methods are set; a failed open leaves the real one's unset.
  const bool usable = rc == SQLITE_OK && f->real->pMethods && f->real->pMethods->iVersion >= 3;
  if (rc == SQLITE_OK && !usable && f->real->pMethods) f->real->pMethods->xClose(f->real);
  f->base.pMethods = usable ? &kLogMethods : nullptr;
  return usable ? SQLITE_OK : (rc != SQLITE_OK ? rc : SQLITE_CANTOPEN);
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

}  // namespace crmd::storage::sqlite
