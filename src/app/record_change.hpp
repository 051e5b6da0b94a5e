// What a durable write did to one record, as realtime subscribers learn of it (api/live_hub.hpp):
// the record's class and id and the kind of write, never its values. Each subscriber reads the
// record again through the read pipeline under its own identity, so nothing here needs hiding.
//
// Handed over by the write pipeline (write/record_writer) as an after-commit action of the write's
// unit, so only once the commit is durable, and in commit order (the after-commit runner is one
// thread).
#pragma once

#include <boost/json/object.hpp>

#include <cstddef>
#include <optional>
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
  // An update's fields as the write named them (top-level names): for LiveQuery's `watch`. Empty:
  // not known, every field counts as changed.
  std::vector<std::string> fields;
  // An update's previous values of the fields it wrote, and its previous `updatedAt`: wire values
  // (a field without a value left out), for LiveQuery's `original`. The subscriber's own read
  // decides which of them it is shown (api/live_hub.cpp). Empty: not known. Held parsed: every
  // subscriber of the class reads it.
  boost::json::object before;
  // The write's unit could change the schema (a new class or field): a server hearing of it from
  // another reloads the application's schema before it reads the record.
  bool schema_changed = false;
};

// The change as one line of JSON, for the other servers of a shared database
// (storage::WriteTransaction::Announce): `{"a":app,"c":class,"o":id,"k":"c"|"u"|"d","f":[...],"b":{...},"s":true}`,
// the previous values left out when they would pass `max_bytes`, then the field names (all of
// them count as changed).
std::string EncodeChange(const RecordChange& change, std::size_t max_bytes);
// The change an announcement carries; nullopt when it is none (another release's, or garbage).
std::optional<RecordChange> DecodeChange(std::string_view text);

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
