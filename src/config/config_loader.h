#pragma once

#include <filesystem>
#include <string_view>

#include "config/config.h"
#include "model/expected.h"

namespace ranktest::config {

// Parses ranktest.toml text. `file_name` is used in error messages, which
// name file:line:column, the key, and what to write instead.
Expected<Config> parse_config(std::string_view toml_text,
                              const std::string& file_name,
                              const std::filesystem::path& root);

Expected<Config> load_config_file(const std::filesystem::path& path);

// A quarantine list kept apart from ranktest.toml (--quarantine FILE): a
// TOML file with a `quarantine` array and nothing else.
Expected<std::vector<QuarantineEntry>> load_quarantine_file(const std::filesystem::path& path);

}  // namespace ranktest::config
