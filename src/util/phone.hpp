// Phone numbers in one form (libphonenumber), so that the local and the international way of
// writing one number are recognised as one.
//
// Normalize and IsKnownRegion use crmd's phone module (crmd-phone.so beside the executable,
// util/phone_abi.hpp), loaded at their first call; they throw std::runtime_error when it cannot be
// loaded. Key needs no module. All are thread-safe.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace crmd::phone {

// `raw` in E.164 (`+972501234567`), reading a number without a country code as one of `region`
// (ISO 3166 alpha-2, `IL`); nullopt when it is no phone number (too short, letters).
std::optional<std::string> Normalize(std::string_view raw, std::string_view region);

// A key every written form of one number shares, without knowing its region: the last 9 digits
// (all when fewer, none below 6), before any extension. Cheap enough for every write (Normalize
// costs ~20 us); different numbers may share one, so a match is checked with Normalize.
std::optional<std::string> Key(std::string_view raw);

// Whether libphonenumber knows `region` as a region with phone numbers.
bool IsKnownRegion(std::string_view region);

// Where the module is looked for: beside the running executable (/proc/self/exe).
std::filesystem::path ModulePath();

// Why the module could not be loaded, checked without loading it (a server refuses to start
// without it rather than fail at its first phone number); nullopt when it is there.
std::optional<std::string> ModuleProblem();

}  // namespace crmd::phone
