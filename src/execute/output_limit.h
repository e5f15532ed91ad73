// Keeping a test's log within `max-output` whatever it prints: the head and
// the tail are kept, the middle dropped with a marker saying how much.
#pragma once

#include <cstdint>
#include <filesystem>
#include <ostream>

namespace ranktest::execute {

// While the test runs: frees the disk blocks of the middle of a log that
// has grown past `limit` (a hole; offsets and the writers' O_APPEND are
// untouched), so the disk use stays near the limit. No-op where the file
// system cannot punch holes.
// True when the log had grown past the limit (the caller looks again soon).
// `from`: where the test's part of the log begins (a gtest worker's log
// holds its earlier tests' output before it).
bool release_middle(const std::filesystem::path& log, std::uint64_t limit, std::uint64_t from = 0);

// Appends bytes [from, to) of `log` to `out`, their first and last limit/2
// bytes only when there are more than `limit` (0: all), with the line
// keep_head_and_tail() writes between them. Returns the bytes dropped.
std::uint64_t copy_head_and_tail(const std::filesystem::path& log, std::uint64_t from,
                                 std::uint64_t to, std::ostream& out, std::uint64_t limit);

// When the test has ended: rewrites a log over `limit` as its first and
// last limit/2 bytes with a line between them saying how many bytes were
// dropped. Returns that number (0 when nothing was dropped).
std::uint64_t keep_head_and_tail(const std::filesystem::path& log, std::uint64_t limit);

}  // namespace ranktest::execute
