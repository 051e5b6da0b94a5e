// What a durable write did to one record, as realtime subscribers learn of it (api/live_hub.hpp):
// the record's class and id and the kind of write, never its values. Each subscriber reads the
// record again through the read pipeline under its own identity, so nothing here needs hiding.
//
// Handed over by the write pipeline (write/record_writer) as an after-commit action of the write's
// unit, so only once the commit is durable, and in commit order (the after-commit runner is one
// thread).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace crmd::app {

struct RecordChange {
  enum class Kind { kCreate, kUpdate, kDelete };
  std::string app_id;
  std::string class_name;
  std::string object_id;
  Kind kind = Kind::kCreate;
  // An update's fields as the write named them (top-level names): for LiveQuery's `watch`.
  std::vector<std::string> fields;
};

// Receives the changes of durable writes. Thread-safe; must not block (it is called on the
// after-commit thread every application shares).
class ChangeSink {
 public:
  virtual ~ChangeSink() = default;
  // Whether anyone may want the changes of `class_name` of `app_id`: a write to a class nobody
  // watches costs this call alone.
  virtual bool Watches(const std::string& app_id, std::string_view class_name) = 0;
  virtual void Changed(RecordChange change) = 0;
};

}  // namespace crmd::app
