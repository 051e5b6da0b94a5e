#include "write/product_base.hpp"

#include <stdexcept>

#include "app/write_unit.hpp"
#include "auth/context.hpp"
#include "schema/log_classes.hpp"
#include "schema/product_base_files.hpp"
#include "storage/write_transaction.hpp"
#include "util/json.hpp"
#include "write/record_writer.hpp"

namespace crmd::write {

namespace json = boost::json;

namespace {

std::string ClassOf(std::string_view path, std::string_view dir) {
  auto name = path.substr(dir.size());
  return std::string(name.substr(0, name.size() - std::string_view(".json").size()));
}

json::value Parse(const schema::EmbeddedFile& file) {
  auto parsed = ParseJson(file.content);
  if (!parsed.ok()) throw std::runtime_error("product base: " + std::string(file.path) + ": " + parsed.error().message);
  return std::move(parsed).value();
}

}  // namespace

std::string ProductBaseVersion() {
  for (const auto& file : schema::ProductBaseFiles())
    if (file.path == "VERSION") {
      std::string v(file.content);
      while (!v.empty() && (v.back() == '\n' || v.back() == '\r')) v.pop_back();
      return v;
    }
  return "unknown";
}

void LoadProductBase(app::Application& app) {
  constexpr std::string_view kClasses = "classes/", kRows = "rows/";
  auth::Context ctx;
  ctx.app = std::shared_ptr<app::Application>(&app, [](app::Application*) {});  // borrowed
  ctx.identity = auth::Identity::System();
  // One unit: the classes and their rows commit together, or the application has none of them.
  auto loaded = app::RunWrite(ctx, [&](app::WriteUnit& unit) -> Status {
    auto snapshot = unit.schema();
    for (const auto& file : schema::ProductBaseFiles()) {
      if (!file.path.starts_with(kClasses)) continue;
      auto definition = Parse(file);
      if (!definition.is_object()) throw std::runtime_error("product base: " + std::string(file.path) + " is not an object");
      auto parsed = schema::ClassSchema::FromJson(definition.get_object());
      if (!parsed.ok()) throw std::runtime_error("product base: " + std::string(file.path) + ": " + parsed.error().message);
      // Every class has createdBy/updatedBy first, as classes created by a write do; the history
      // starts from the fields crmd writes to it (schema/log_classes.hpp).
      schema::ClassSchema cls = parsed.value().name == schema::kTimelineClass
                                    ? schema::TimelineClass()
                                    : schema::ClassSchema::NewImplicit(parsed.value().name);
      for (auto& field : parsed.value().fields)
        if (!cls.FindField(field.first)) cls.fields.push_back(std::move(field));
      cls.class_level_permissions = std::move(parsed.value().class_level_permissions);
      for (auto& index : parsed.value().indexes) cls.indexes[index.key()] = std::move(index.value());
      cls.timeline = std::move(parsed.value().timeline);
      if (cls.name != ClassOf(file.path, kClasses) || snapshot->Find(cls.name))
        throw std::runtime_error("product base: " + std::string(file.path) + " names another or an existing class");
      unit.txn().SaveClass(nullptr, cls);
      snapshot = snapshot->With(std::move(cls));
    }
    unit.ChangeSchema(snapshot);
    for (const auto& file : schema::ProductBaseFiles()) {
      if (!file.path.starts_with(kRows)) continue;
      const std::string cls = ClassOf(file.path, kRows);
      auto rows = Parse(file);
      if (!rows.is_array()) throw std::runtime_error("product base: " + std::string(file.path) + " is not an array");
      for (const auto& row : rows.get_array()) {
        if (!row.is_object()) throw std::runtime_error("product base: a row of " + std::string(file.path) + " is not an object");
        auto created = CreateRecord(ctx, cls, row.get_object());
        if (!created.ok())
          throw std::runtime_error("product base: " + std::string(file.path) + ": " + created.error().message);
      }
    }
    return {};
  }, app::WriteStart::kExclusive);
  if (!loaded.ok()) throw std::runtime_error("product base: " + loaded.error().message);
}

}  // namespace crmd::write
