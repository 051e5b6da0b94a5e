// The schema of one class (spec §2.5) and the immutable snapshot of all classes of an application.
//
// A Snapshot is never changed once published: a write that adds a class or field builds a new one
// and swaps it in after its transaction commits, so readers never lock and never see a half change.
#pragma once

#include <boost/json.hpp>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "schema/field_options.hpp"
#include "schema/field_type.hpp"
#include "util/result.hpp"

namespace crmd::triggers {
class Plan;
}

namespace crmd::schema {

// Fields a class may hold: each is a column of its table (SQLite refuses more than 2,000), and a
// write scans them.
inline constexpr std::size_t kMaxFieldsPerClass = 500;

struct ClassSchema {
  std::string name;
  // Declared fields in creation order, without objectId/createdAt/updatedAt/ACL (always present).
  std::vector<std::pair<std::string, FieldDef>> fields;
  // The options of the declared fields that have some (schema endpoint only); kept beside `fields`
  // because a field's type is what every other layer compares.
  std::map<std::string, FieldOptions, std::less<>> field_options;
  boost::json::object class_level_permissions;
  boost::json::object indexes;
  // The automation definitions (spec §6.1) as stored and returned, `_id`s filled; what runs is
  // their compiled form (Snapshot::TriggerPlan).
  boost::json::array triggers;
  std::optional<boost::json::object> timeline;  // only on timeline-enabled classes

  const FieldDef* FindField(std::string_view field) const;
  // The same, trying the field at `next` first and leaving `next` just past the one found: a body
  // whose keys come in the class's order (a client writing the same shape again) finds each at
  // the first look instead of scanning the fields for every key.
  const FieldDef* FindField(std::string_view field, std::size_t& next) const;

  // The schema object of spec §2.5, builtin fields included.
  boost::json::object ToJson() const;
  // The persisted form is ToJson(); builtin fields in it are skipped on load.
  static Result<ClassSchema> FromJson(const boost::json::object& definition);

  // A class created by its first write: createdBy/updatedBy declared, Parse's open default CLP.
  // `open`: a class of an application whose new classes are open (auth::Gates), which gets
  // Parse's default permissions, everyone everything; system classes and `Config` stay closed.
  static ClassSchema NewImplicit(std::string name, bool open = false);
};

// Parse's default class-level permissions for a class created by a write: open to everyone.
boost::json::object DefaultOpenPermissions();
// Every operation closed to everyone but the master and API keys.
boost::json::object ClosedPermissions();

class Snapshot {
 public:
  using ClassMap = std::map<std::string, std::shared_ptr<const ClassSchema>, std::less<>>;

  Snapshot() = default;
  explicit Snapshot(ClassMap classes) : classes_(std::move(classes)) {}
  Snapshot(const Snapshot&) = delete;  // one compiled plan per snapshot: share it, do not copy it
  Snapshot& operator=(const Snapshot&) = delete;

  // Null when the class does not exist (not an error: queries on it answer an empty list).
  const ClassSchema* Find(std::string_view class_name) const;
  const ClassMap& classes() const { return classes_; }

  // A new snapshot with `cls` added or replaced.
  std::shared_ptr<const Snapshot> With(ClassSchema cls) const;
  // A new snapshot without the class `name`.
  std::shared_ptr<const Snapshot> Without(std::string_view name) const;

  // The trigger definitions of every class, compiled (triggers/plan.hpp): built by `build` at the
  // first call and kept for the snapshot's life, so no write parses a definition. Thread-safe.
  using PlanBuilder = std::shared_ptr<const triggers::Plan> (*)(const Snapshot&);
  const triggers::Plan& TriggerPlan(PlanBuilder build) const;

 private:
  ClassMap classes_;
  mutable std::once_flag plan_once_;
  mutable std::shared_ptr<const triggers::Plan> plan_;
};

}  // namespace crmd::schema
