// Time as the wire carries it: UTC, milliseconds, `2026-11-21T10:00:00.000Z` (DESIGN.md).
// Strings in this exact form sort in time order, which storage relies on for createdAt/updatedAt.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace crmd::timeutil {

// Milliseconds since the Unix epoch, by crmd's one clock: every "now" of the service reads it.
std::int64_t NowMillis();
// The clock's seams, for tests (thread-safe; the service never calls them but at start):
// SetClockOffset shifts the system's time (`crmd serve` takes it from CRMD_TEST_CLOCK_OFFSET_MS,
// so end-to-end tests can start a server days later); SetClock fixes the time until it is given
// nullopt.
void SetClockOffset(std::int64_t millis);
void SetClock(std::optional<std::int64_t> millis);
std::string FormatIso(std::int64_t millis);
inline std::string NowIso() { return FormatIso(NowMillis()); }

// Accepts `YYYY-MM-DD`, `YYYY-MM-DDTHH:MM[:SS[.fraction]]` with `Z`, `±HH:MM` or no zone (UTC).
// Not an error: a fraction longer than milliseconds (truncated). Returns nullopt for anything else.
std::optional<std::int64_t> ParseIso(std::string_view text);

// ParseIso then FormatIso: the canonical stored form of a Date value.
std::optional<std::string> NormalizeIso(std::string_view text);

}  // namespace crmd::timeutil
