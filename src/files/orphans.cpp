#include "files/orphans.hpp"

#include <filesystem>
#include <set>

#include "files/file_names.hpp"
#include "files/file_store.hpp"
#include "storage/record_store.hpp"
#include "util/json.hpp"

namespace crmd::files {

namespace fs = std::filesystem;

namespace {

// The stored names every File and PrivateFile value of the application names.
std::set<std::string, std::less<>> Referenced(app::Application& app) {
  std::set<std::string, std::less<>> names;
  const auto snapshot = app.schema();
  for (const auto& [class_name, cls] : snapshot->classes()) {
    std::vector<std::string> fields;
    for (const auto& [field, def] : cls->fields)
      if (def.type == schema::FieldType::kFile || def.type == schema::FieldType::kPrivateFile) fields.push_back(field);
    if (fields.empty()) continue;
    schema::Query all;
    all.limit = -1;
    app.db().Find(*cls, all, [&](storage::Row& row) {
      for (const auto& field : fields) {
        const auto cell = storage::CellOf(*cls, row, field);
        const auto* text = std::get_if<std::string>(&cell);
        if (!text) continue;
        auto parsed = ParseJson(*text);
        if (!parsed.ok() || !parsed.value().is_object()) continue;
        if (const auto* name = parsed.value().get_object().if_contains("name"); name && name->is_string())
          names.emplace(name->get_string());
      }
      return true;
    });
  }
  return names;
}

}  // namespace

Collected RemoveOrphans(app::Application& app, std::chrono::seconds min_age) {
  Collected out;
  const fs::path folder = fs::path(app.dir()) / "files";
  std::error_code ec;
  if (!fs::exists(folder, ec)) return out;
  // The files first, then the references: a file attached meanwhile is found referenced.
  std::vector<std::string> candidates;
  const auto cutoff = fs::file_time_type::clock::now() - min_age;
  for (const auto& entry : fs::directory_iterator(folder, ec)) {
    const std::string name = entry.path().filename().string();
    if (!IsStoredName(name)) continue;  // not an upload (a half one of a request written here)
    if (entry.last_write_time(ec) > cutoff) {
      ++out.kept;
      continue;
    }
    candidates.push_back(name);
  }
  const auto referenced = Referenced(app);
  for (const auto& name : candidates) {
    if (referenced.contains(name)) {
      ++out.kept;
      continue;
    }
    if (Remove(app.dir(), name)) out.removed.push_back(name);
  }
  return out;
}

}  // namespace crmd::files
