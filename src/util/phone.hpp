// Phone numbers in one form (libphonenumber), so that the local and the international way of
// writing one number are recognised as one.
#pragma once

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

}  // namespace crmd::phone
