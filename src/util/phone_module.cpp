// crmd's phone module (crmd-phone.so): libphonenumber behind util/phone_abi.hpp. Not part of
// crmd_core; util/phone.cpp loads it at the first phone number.
#include <phonenumbers/phonenumberutil.h>

#include <cstring>
#include <string>

#include "util/phone_abi.hpp"

namespace {
using i18n::phonenumbers::PhoneNumber;
using i18n::phonenumbers::PhoneNumberUtil;
}  // namespace

extern "C" {

__attribute__((visibility("default"))) int crmd_phone_abi_version() { return crmd::phone::kPhoneAbiVersion; }

__attribute__((visibility("default"))) int crmd_phone_normalize(const char* raw, std::size_t raw_size, const char* region,
                                                                std::size_t region_size, char* out) {
  try {
    const auto* util = PhoneNumberUtil::GetInstance();  // thread-safe after its first call
    PhoneNumber number;
    if (util->Parse(std::string(raw, raw_size), std::string(region, region_size), &number) != PhoneNumberUtil::NO_PARSING_ERROR)
      return 0;
    // Possible (a length the region's numbers have), not necessarily valid: a range assigned after
    // this release of libphonenumber is still a number its writer uses.
    if (!util->IsPossibleNumber(number)) return 0;
    std::string e164;
    util->Format(number, PhoneNumberUtil::E164, &e164);
    if (e164.empty() || e164.size() > crmd::phone::kE164Capacity) return -1;
    std::memcpy(out, e164.data(), e164.size());
    return static_cast<int>(e164.size());
  } catch (...) {
    return -1;
  }
}

__attribute__((visibility("default"))) int crmd_phone_known_region(const char* region, std::size_t region_size) {
  try {
    return PhoneNumberUtil::GetInstance()->GetCountryCodeForRegion(std::string(region, region_size)) != 0 ? 1 : 0;
  } catch (...) {
    return -1;
  }
}

}  // extern "C"
