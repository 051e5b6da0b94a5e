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

// Rewrites the File and PrivateFile cells among `cells` (aligned with `columns`) of the record
// `object_id`. Returns the names attached to File fields: made public once the write commits.
std::vector<std::string> AttachFiles(const app::Application& app, const schema::ClassSchema& cls,
                                     std::string_view object_id, const std::vector<std::string>& columns,
                                     std::vector<storage::Cell>& cells);

// Makes `names` public (files::Publish) once `unit` is durable, before the write is answered.
void PublishAfterCommit(app::WriteUnit& unit, const app::Application& app, std::vector<std::string> names);

}  // namespace crmd::write
