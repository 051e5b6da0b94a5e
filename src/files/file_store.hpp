// Where an application's files live: `DATA/apps/<appId>/files/<stored name>` (files/file_names).
// An upload is written to a temporary file first (the HTTP server streams it there as it arrives,
// under `DATA/tmp/uploads/`, on the same file system) and kept only once it is whole: synced,
// renamed into the folder, and the folder synced. So a name a client was given always has its
// whole file, and a crash mid-upload leaves at most a temporary file, which the next server to
// start removes (files/upload_area).
//
// Names reach the file system only after IsStoredName: no path leaves the application's folder.
// Thread-safe (each call works on its own file).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace crmd::files {

// `DATA/apps/<appId>/files/<stored name>`, or nullopt for a name no upload could have answered.
std::optional<std::string> FilePath(const std::string& app_dir, std::string_view stored_name);

// Makes the whole upload at `temp_path` the file `stored_name` of the application at `app_dir`.
// Throws std::runtime_error when the disk refuses (the temporary file is then left to the caller).
void Keep(const std::string& temp_path, const std::string& app_dir, std::string_view stored_name);

// Removes the file, its public copy and its private mark; false when there was none (not an error).
bool Remove(const std::string& app_dir, std::string_view stored_name);

// Makes the file public (attached to a File field): a second name for it under
// `DATA/apps/<appId>/public/`, the only folder the static host serves. False when there is no
// such file (an attachment of a name never uploaded: its address then answers 404), or when the
// file is private: a writer who learned a private file's name cannot publish it by attaching it
// to a File field.
//
// Private wins, whatever the order (issue 31 #7): Publish links, then looks for the mark and
// unlinks if it is there; MarkPrivate marks, then unlinks. Of a Publish and a MarkPrivate racing
// (threads, or servers sharing `--data`), one of the two always sees the other's step, so no
// link survives a mark.
bool Publish(const std::string& app_dir, std::string_view stored_name);
// `DATA/apps/<appId>/public/<stored name>`, or nullopt for a name no upload could have answered.
std::optional<std::string> PublicPath(const std::string& app_dir, std::string_view stored_name);

// Marks the file private (attached to a PrivateFile field): an empty file of its name under
// `DATA/apps/<appId>/private/`. From then on its upload address serves the master key alone; users
// reach it only through a record that holds it; and a public copy it had (it was attached to a
// File field first) is removed, so its static address answers 404 (a CDN may keep its copy for
// the rest of its max-age). The mark is never lifted: once private, a file stays private. False
// when there is no such file.
bool MarkPrivate(const std::string& app_dir, std::string_view stored_name);
bool IsPrivate(const std::string& app_dir, std::string_view stored_name);

}  // namespace crmd::files
