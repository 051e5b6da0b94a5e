// File values on attachment (spec §3.3, §4.8): a `File` or `PrivateFile` value sent as an upload
// returned it is stored with the address the field type gives it, so every encoder, include and
// keys return the same value without knowing about files:
//   File:        {"__type":"File","name",url: <static-url>/<appId>/<name>, "public":true}
//   PrivateFile: {"__type":"File","name",url: <public-url>/<prefix>/files/<appId>/<name>/<Table>/<objectId>/<Field>,
//                 "private":true}
// A name never uploaded is stored the same way; its address answers 404.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "app/application.hpp"
#include "app/write_unit.hpp"
#include "schema/class_schema.hpp"
#include "storage/row.hpp"

namespace crmd::write {

// The names a write attached, to settle once it commits.
struct AttachedFiles {
  std::vector<std::string> published;  // to File fields
  std::vector<std::string> kept_private;  // to PrivateFile fields
};

// Rewrites the File and PrivateFile cells among `cells` (aligned with `columns`) of the record
// `object_id`, and names what they attach.
AttachedFiles AttachFiles(const app::Application& app, const schema::ClassSchema& cls,
                                     std::string_view object_id, const std::vector<std::string>& columns,
                                     std::vector<storage::Cell>& cells);

// Once `unit` is durable, before the write is answered: marks private (files::MarkPrivate, which
// also takes a public copy down) and publishes (files::Publish) what `attached` names. Removing or
// replacing a File value, or deleting its record, leaves its file as it is (docs/FILES.md).
void SettleAtCommit(app::WriteUnit& unit, const app::Application& app, AttachedFiles attached);

}  // namespace crmd::write
