// Reading a JSON report a test wrote without trusting its size: a test may
// fail with a 100 MB message, or with a million failures, and the runner's
// memory, the journal, the history and JUnit must stay bounded all the same.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace ranktest::text {

struct JsonBounds {
  std::size_t max_string_bytes = 64 * 1024;  // each string's content
  std::size_t max_array_elements = 100;      // each array
};

struct BoundedJson {
  std::string text;                 // still JSON wherever the file was
  std::uint64_t file_bytes = 0;     // the file's size as written
  std::uint64_t strings_cut = 0;    // strings that lost their end
  std::uint64_t elements_dropped = 0;  // array elements left out
};

// Reads the file at `path` a chunk at a time, keeping at most
// `max_string_bytes` of each string (cut at a character, marked
// "…[cut by ranktest; the whole is in <path>]") and the first
// `max_array_elements` of each array. Valid JSON stays valid JSON; what is
// not JSON comes back as bounded as the same rules make it. Memory: the
// result, not the file. A missing file reads empty.
BoundedJson read_json_bounded(const std::filesystem::path& path, const JsonBounds& bounds = {});

// The same, over text already in memory (for tests).
BoundedJson bound_json(std::string_view json, const std::string& whole_is_in,
                       const JsonBounds& bounds = {});

}  // namespace ranktest::text
