// Where one server process streams its uploads in flight (issue 33): the folder
// `DATA/tmp/uploads/<id>/`, beside the lock file `DATA/tmp/uploads/<id>.lock`, which the process
// holds locked (flock) for as long as it runs. Servers sharing a `--data` (several on one
// PostgreSQL database) each stream into their own folder, and one that starts removes only the
// folders whose lock no process holds: what a server that crashed or was killed mid-upload left.
// The kernel drops a dead process's locks, so a folder is never taken for abandoned while its
// server runs, and never kept once it died.
//
// The invariants that make a start racing another's sweep safe:
// - the lock file exists before its folder: a folder is made only by the holder of its lock, after
//   it locked;
// - a lock file is unlinked only by a holder of its lock, after its folder is gone;
// - a process that locked a lock file checks that the name still points at the file it locked (a
//   sweep may have taken and unlinked it in between), and otherwise tries another id.
// So a folder whose lock file is missing is abandoned, as is any entry of another shape (a loose
// `<pid>-<n>.part` of a server before issue 33).
//
// flock works across hosts on NFSv4 (Linux emulates it with a byte-range lock there); on a
// shared file system without working locks, servers must not share `--data`.
//
// Not thread-safe: made once at start, before any upload arrives; dir() may then be read from any
// thread.
#pragma once

#include <string>

namespace crmd::files {

class UploadArea {
 public:
  // Removes the abandoned folders under `root` (made if missing), then makes and locks this
  // process's own. Throws std::runtime_error when the disk refuses.
  static UploadArea Claim(const std::string& root);

  // Removes the folder (whatever is still in it was never kept) and its lock file: a server that
  // stops cleanly leaves nothing behind.
  ~UploadArea();
  UploadArea(UploadArea&& other) noexcept;
  UploadArea& operator=(UploadArea&& other) noexcept;
  UploadArea(const UploadArea&) = delete;
  UploadArea& operator=(const UploadArea&) = delete;

  // The folder this process streams into.
  const std::string& dir() const { return dir_; }

 private:
  UploadArea(int lock_fd, std::string dir, std::string lock_path);
  void Release();

  int lock_fd_ = -1;
  std::string dir_;
  std::string lock_path_;
};

// Removes every folder under `root` whose lock no process holds, and every entry that is neither a
// lock file nor a folder beside one; returns how many folders and entries went. Folders of
// running servers stay, whatever they hold.
int RemoveAbandonedUploads(const std::string& root);

}  // namespace crmd::files
