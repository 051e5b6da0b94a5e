#include "util/phone.hpp"

#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <stdexcept>
#include <system_error>

#include "util/phone_abi.hpp"
#include "util/shared_library.hpp"

namespace crmd::phone {

namespace {

// Longer input is no phone number, and libphonenumber's parse is not free.
constexpr std::size_t kMaxLength = 64;
constexpr const char* kModuleName = "crmd-phone.so";

// libphonenumber, loaded once (util/phone_abi.hpp says why it is a module); never unloaded, as
// its singletons live until exit.
struct Module {
  decltype(&crmd_phone_normalize) normalize = nullptr;
  decltype(&crmd_phone_known_region) known_region = nullptr;
  std::string problem;  // why it could not be used; empty when it can
};

Module Load() {
  Module module;
  const auto path = ModulePath();
  const SharedLibrary lib(path.string(), "crmd's phone module " + path.string());
  if (!lib.ok()) {
    module.problem = lib.problem();
    return module;
  }
  decltype(&crmd_phone_abi_version) version = nullptr;
  if (!lib.Find("crmd_phone_abi_version", version) || !lib.Find("crmd_phone_normalize", module.normalize) ||
      !lib.Find("crmd_phone_known_region", module.known_region) || version() != kPhoneAbiVersion)
    module.problem = "crmd's phone module " + path.string() + " is not the one this crmd was built with";
  return module;
}

const Module& Loaded() {
  static const Module module = Load();  // thread-safe; the first phone number pays the load (~5 ms)
  if (!module.problem.empty()) throw std::runtime_error(module.problem);
  return module;
}

}  // namespace

std::filesystem::path ModulePath() {
  std::error_code error;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", error);
  return (error ? std::filesystem::path() : self.parent_path()) / kModuleName;
}

std::optional<std::string> ModuleProblem() {
  const auto path = ModulePath();
  if (access(path.c_str(), R_OK) != 0)
    return "crmd's phone module " + path.string() + " is missing: it is built beside the crmd binary and goes with it";
  return std::nullopt;
}

std::optional<std::string> Normalize(std::string_view raw, std::string_view region) {
  if (raw.empty() || raw.size() > kMaxLength) return std::nullopt;
  char out[kE164Capacity];
  const int size = Loaded().normalize(raw.data(), raw.size(), region.data(), region.size(), out);
  if (size < 0) throw std::runtime_error("crmd's phone module failed to read a phone number");
  if (size == 0) return std::nullopt;
  return std::string(out, static_cast<std::size_t>(size));
}

std::optional<std::string> Key(std::string_view raw) {
  constexpr std::size_t kKeyDigits = 9, kFewestDigits = 6;
  if (raw.size() > kMaxLength) return std::nullopt;
  std::string digits;
  for (const char c : raw) {
    if (c >= '0' && c <= '9') digits.push_back(c);
    else if (std::isalpha(static_cast<unsigned char>(c)) || c == '#' || c == ';' || c == ',') break;  // an extension
  }
  if (digits.size() < kFewestDigits) return std::nullopt;
  if (digits.size() > kKeyDigits) digits.erase(0, digits.size() - kKeyDigits);
  return digits;
}

bool IsKnownRegion(std::string_view region) {
  const int known = Loaded().known_region(region.data(), region.size());
  if (known < 0) throw std::runtime_error("crmd's phone module failed to read a region");
  return known == 1;
}

}  // namespace crmd::phone
