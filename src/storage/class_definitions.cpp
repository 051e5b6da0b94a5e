#include "storage/class_definitions.hpp"

#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "storage/storage_error.hpp"
#include "util/json.hpp"

namespace crmd::storage {

namespace {

// Bounded: when full it starts over (every application may have classes of its own). The product
// base's texts come back with the next opens.
constexpr std::size_t kMaxDefinitions = 8192;

// Looked up by the text as the store holds it, without a copy of it per lookup.
struct TextHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
};

struct Definitions {
  std::mutex mutex;
  std::unordered_map<std::string, ClassDefinition, TextHash, std::equal_to<>> by_text;
};

Definitions& Known() {
  static auto* known = new Definitions;  // never destroyed: stores close during exit
  return *known;
}

}  // namespace

ClassDefinition ReadClassDefinition(std::string_view text, std::string_view store) {
  Definitions& known = Known();
  {
    std::lock_guard lock(known.mutex);
    if (auto it = known.by_text.find(text); it != known.by_text.end()) return it->second;
  }
  auto parsed = ParseJson(text);
  if (!parsed.ok() || !parsed.value().is_object())
    throw StorageError("unreadable class definition in " + std::string(store));
  auto cls = schema::ClassSchema::FromJson(parsed.value().get_object());
  if (!cls.ok()) throw StorageError("invalid class definition in " + std::string(store) + ": " + cls.error().message);
  auto definition = std::make_shared<const schema::ClassSchema>(std::move(cls).value());
  std::lock_guard lock(known.mutex);
  if (known.by_text.size() >= kMaxDefinitions) known.by_text.clear();
  known.by_text.emplace(std::string(text), definition);
  return definition;
}

}  // namespace crmd::storage
