// Reads one table of ranktest.toml, turning every problem into an Error that
// names file:line:column, the key, and what to write instead.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <toml++/toml.h>
#include <vector>

#include "config/config.h"
#include "model/expected.h"

namespace ranktest::config {

class TableReader {
 public:
  // `context` follows the key in messages: " in [[source]]", or "" at the top.
  TableReader(const std::string& file, std::string context)
      : file_(file), context_(std::move(context)) {}

  const std::string& file() const { return file_; }
  Place place_of(const toml::source_region& region) const;
  Error error_at(const toml::source_region& region, const std::string& message) const;
  // An error for the first key of `table` that is not in `known`, sending
  // the reader to `docs`, where the table's keys are described.
  std::optional<Error> check_keys(const toml::table& table, const std::vector<std::string>& known,
                                  std::string_view docs = "docs/configuration.md") const;
  Error wrong_type(std::string_view key, const toml::node& node, std::string_view expected) const;

  // A duration from 0 (or above 0, when `positive`) to 30 days.
  Expected<Duration> duration(std::string_view key, const toml::node& node,
                              bool positive = false) const;
  Expected<std::uint64_t> size(std::string_view key, const toml::node& node) const;
  // A whole number from `min` to `max`; anything else names the range.
  Expected<int> integer(std::string_view key, const toml::node& node, int min, int max) const;
  // The settings a test can get both from the top level (every test's
  // default) and from an [[override]].
  std::optional<Error> limits(const toml::table& table, TestSettings& settings) const;
  Expected<Launcher> launcher(const toml::node& node) const;
  // isolation = "test" | "worker": whether tests run in worker processes.
  Expected<bool> worker_isolation(const toml::node& node) const;
  // network and tmpdir, which the top level, [[source]] and [[override]]
  // all take. A table that isolates the network of ranks mpirun or srun
  // starts is refused here; settings from different tables meet in the
  // plan (select::network_conflict).
  std::optional<Error> containment(const toml::table& table, std::optional<Network>& network,
                                   std::optional<bool>& private_tmpdir,
                                   const std::optional<Launcher>& launcher) const;
  Expected<std::vector<std::string>> strings(std::string_view key, const toml::node& node) const;

 private:
  const std::string& file_;  // outlived by the caller's file name
  std::string context_;
};

}  // namespace ranktest::config
