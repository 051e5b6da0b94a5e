#include "util/phone.hpp"

#include <phonenumbers/phonenumberutil.h>

#include <cctype>

namespace crmd::phone {

namespace {
using i18n::phonenumbers::PhoneNumber;
using i18n::phonenumbers::PhoneNumberUtil;

// Longer input is no phone number, and libphonenumber's parse is not free.
constexpr std::size_t kMaxLength = 64;
}  // namespace

std::optional<std::string> Normalize(std::string_view raw, std::string_view region) {
  if (raw.empty() || raw.size() > kMaxLength) return std::nullopt;
  const auto* util = PhoneNumberUtil::GetInstance();  // thread-safe after its first call
  PhoneNumber number;
  if (util->Parse(std::string(raw), std::string(region), &number) != PhoneNumberUtil::NO_PARSING_ERROR)
    return std::nullopt;
  // Possible (a length the region's numbers have), not necessarily valid: a range assigned after
  // this release of libphonenumber is still a number its writer uses.
  if (!util->IsPossibleNumber(number)) return std::nullopt;
  std::string out;
  util->Format(number, PhoneNumberUtil::E164, &out);
  return out;
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
  return PhoneNumberUtil::GetInstance()->GetCountryCodeForRegion(std::string(region)) != 0;
}

}  // namespace crmd::phone
