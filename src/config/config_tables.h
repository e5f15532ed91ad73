// The tables of ranktest.toml, one reader each; parse_config
// (config_loader.cpp) calls them in order.
#pragma once

#include <optional>
#include <toml++/toml.h>

#include "config/config.h"
#include "config/table_reader.h"
#include "model/expected.h"

namespace ranktest::config {

// The top-level keys, [devices], [mpirun] and [slurm].
std::optional<Error> read_top_level(const toml::table& table, const TableReader& reader,
                                    Config& config);
// One [[source]].
std::optional<Error> read_source(const toml::table& table, const TableReader& reader,
                                 SourceConfig& source);
// One [[override]].
std::optional<Error> read_override(const toml::table& table, const TableReader& reader,
                                   Override& entry);

}  // namespace ranktest::config
