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

// Whether libphonenumber knows `region` as a region with phone numbers.
bool IsKnownRegion(std::string_view region);

}  // namespace crmd::phone
