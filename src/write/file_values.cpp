#include "write/file_values.hpp"

#include "app/write_unit.hpp"
#include "files/file_names.hpp"
#include "files/file_store.hpp"
#include "util/json.hpp"
#include "util/log.hpp"

namespace crmd::write {

namespace json = boost::json;

AttachedFiles AttachFiles(const app::Application& app, const schema::ClassSchema& cls,
                                     std::string_view object_id, const std::vector<std::string>& columns,
                                     std::vector<storage::Cell>& cells) {
  AttachedFiles attached;
  for (std::size_t i = 0; i < columns.size() && i < cells.size(); ++i) {
    const auto* def = cls.FindField(columns[i]);
    if (!def || (def->type != schema::FieldType::kFile && def->type != schema::FieldType::kPrivateFile)) continue;
    const auto* text = std::get_if<std::string>(&cells[i]);
    if (!text) continue;  // a null or a deletion
    auto parsed = ParseJson(*text);
    if (!parsed.ok() || !parsed.value().is_object()) continue;
    const auto* name_value = parsed.value().get_object().if_contains("name");
    if (!name_value || !name_value->is_string()) continue;
    const std::string name(name_value->get_string());
    const auto& settings = app.settings();
    json::object file{{"__type", "File"}, {"name", name}};
    if (def->type == schema::FieldType::kFile) {
      file["url"] = settings.static_url + "/" + app.id() + "/" + files::EncodeSegment(name);
      file["public"] = true;
      attached.published.push_back(name);
    } else {
      file["url"] = settings.public_url + "/" + settings.prefix + "/files/" + app.id() + "/" + files::EncodeSegment(name) +
                    "/" + files::EncodeSegment(cls.name) + "/" + std::string(object_id) + "/" + files::EncodeSegment(columns[i]);
      file["private"] = true;
      attached.kept_private.push_back(name);
    }
    cells[i] = ToJson(file);
  }
  return attached;
}

void SettleAtCommit(app::WriteUnit& unit, const app::Application& app, AttachedFiles attached) {
  if (attached.published.empty() && attached.kept_private.empty()) return;
  // Before the answer: the static address it returns serves at once.
  // The write is durable by then: a disk that refuses a link or a mark is logged, not answered.
  unit.AtCommit([dir = app.dir(), attached = std::move(attached)] {
    try {
      // Private first: a name attached to both kinds of field in one write is never public even
      // for a moment (issue 31 #7; files::Publish refuses a marked file).
      for (const auto& name : attached.kept_private) files::MarkPrivate(dir, name);
      for (const auto& name : attached.published) files::Publish(dir, name);
    } catch (const std::exception& e) {
      log::Error("attached file not settled", {{"dir", dir}, {"error", e.what()}});
    }
  });
}

}  // namespace crmd::write
