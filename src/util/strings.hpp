// Small string helpers with no project knowledge.
#pragma once

#include <string_view>
#include <vector>

namespace crmd {

// Splits on `separator`, keeping empty parts: "a,,b" -> {"a", "", "b"}; "" -> {""}.
// The views point into `text`.
std::vector<std::string_view> Split(std::string_view text, char separator);

}  // namespace crmd
