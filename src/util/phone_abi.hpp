// The C interface between crmd and its phone module (crmd-phone.so, built from
// util/phone_module.cpp): libphonenumber with protobuf and ICU behind it, ~7 MiB of resident
// pages and metadata that a server which never sees a phone number does not need to map. crmd
// dlopen()s the module beside its executable at the first phone number (util/phone.cpp).
//
// Plain C types only, so the two sides share no C++ object layout; a function returns a negative
// number for a fault inside the module (an exception, memory), never throws across the boundary.
// The module and crmd are built together: kPhoneAbiVersion changes with any signature here.
#pragma once

#include <cstddef>

namespace crmd::phone {
inline constexpr int kPhoneAbiVersion = 1;
// Longest E.164 form (a '+' and 15 digits) with room to spare.
inline constexpr std::size_t kE164Capacity = 32;
}  // namespace crmd::phone

extern "C" {
// kPhoneAbiVersion of the module's build.
int crmd_phone_abi_version();
// `raw` in E.164 into `out` (capacity kE164Capacity), reading a number without a country code as
// one of `region`: the length written, 0 when `raw` is no phone number, < 0 on a fault.
int crmd_phone_normalize(const char* raw, std::size_t raw_size, const char* region, std::size_t region_size, char* out);
// 1 when libphonenumber knows `region` as a region with phone numbers, 0 when not, < 0 on a fault.
int crmd_phone_known_region(const char* region, std::size_t region_size);
}
