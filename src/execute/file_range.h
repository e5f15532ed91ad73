// Reading and writing parts of a log with few system calls: a gtest
// worker's log is cut into its tests' slices at each test's end.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace ranktest::execute {

// Where `needle` first occurs in the file at or after `from`; nullopt: not in it.
std::optional<std::uintmax_t> find_in_file(const std::filesystem::path& path, std::uintmax_t from,
                                           const std::string& needle);

// Writes all of `bytes` to `fd`.
bool write_all(int fd, std::string_view bytes);

// The bytes [from, to) of a file (fewer where it is shorter).
std::string read_range(const std::filesystem::path& path, std::uintmax_t from, std::uintmax_t to);

}  // namespace ranktest::execute
