// The top level of ranktest.toml, with [devices], [mpirun] and [slurm].
#include <fmt/format.h>

#include <algorithm>

#include "config/config_tables.h"

namespace ranktest::config {
namespace {

// A launcher's table: [mpirun], [slurm].
std::optional<Error> read_launcher(const toml::node& node, const launchers::LauncherKind& kind,
                                   const std::string& file, const std::filesystem::path& root,
                                   LauncherConfig& into) {
  const auto name = kind.name();
  const auto* table = node.as_table();
  if (!table)
    return TableReader(file, "").wrong_type(name, node,
                                            fmt::format("a table, written [{}]", name));
  const TableReader reader(file, fmt::format(" in [{}]", name));
  if (auto error =
          reader.check_keys(*table, kind.table_keys(), "docs/launchers.md"))
    return error;
  if (const auto* command = table->get("command")) {
    if (!command->is_string() || command->value<std::string>()->empty())
      return reader.wrong_type("command", *command,
                               fmt::format("the launcher's name or path, e.g. \"{}\"",
                                           kind.default_command()));
    into.command = command->value<std::string>().value();
  }
  if (const auto* args = table->get("args")) {
    auto list = reader.strings("args", *args);
    if (!list) return list.error();
    into.args = std::move(*list);
  }
  if (const auto* hostfile = table->get("hostfile")) {
    if (!hostfile->is_string()) return reader.wrong_type("hostfile", *hostfile, "a path string");
    into.hostfile = root / hostfile->value<std::string>().value();
  }
  if (const auto* node = table->get("start-timeout")) {
    auto value = reader.duration("start-timeout", *node, true);
    if (!value) return value.error();
    into.start_timeout = *value;
  }
  return std::nullopt;
}

// A key that is true or false.
std::optional<Error> read_flag(const toml::table& table, const TableReader& reader,
                               const char* key, bool& into) {
  const auto* node = table.get(key);
  if (!node) return std::nullopt;
  if (!node->is_boolean()) return reader.wrong_type(key, *node, "true or false");
  into = node->value<bool>().value();
  return std::nullopt;
}

// A key that is one of two words: whether it is the second.
std::optional<Error> read_choice(const toml::table& table, const TableReader& reader,
                                 const char* key, std::string_view first,
                                 std::string_view second, bool& is_second) {
  const auto* node = table.get(key);
  if (!node) return std::nullopt;
  const auto* text = node->as_string();
  if (!text || (text->get() != first && text->get() != second))
    return reader.wrong_type(key, *node, fmt::format("\"{}\" or \"{}\"", first, second));
  is_second = text->get() == second;
  return std::nullopt;
}

// [devices]: per kind, a count or the ids, each listed once.
std::optional<Error> read_devices(const toml::node& node, const TableReader& reader,
                                  Config& config) {
  const auto* kinds = node.as_table();
  if (!kinds) return reader.wrong_type("devices", node, "a table, written [devices]");
  for (const auto& [kind, value] : *kinds) {
    const std::string key = "devices." + std::string(kind.str());
    auto& ids = config.devices[std::string(kind.str())];
    if (auto count = value.value<int64_t>(); count && value.is_integer()) {
      if (*count < 0 || *count > 4096)
        return reader.wrong_type(key, value, "a count from 0 to 4096 or an array of ids");
      for (int64_t i = 0; i < *count; ++i) ids.push_back(std::to_string(i));
    } else if (const auto* array = value.as_array()) {
      for (const auto& id : *array) {
        std::string text;
        if (id.is_integer()) text = std::to_string(id.value<int64_t>().value());
        else if (id.is_string()) text = id.value<std::string>().value();
        else return reader.wrong_type(key, id, "an array of device ids (integers or strings)");
        // One device listed twice would be granted to two tests at once.
        if (std::find(ids.begin(), ids.end(), text) != ids.end())
          return reader.error_at(id.source(),
                                 fmt::format("key '{}' lists device {} twice; list each "
                                             "device once",
                                             key, text));
        ids.push_back(std::move(text));
      }
    } else {
      return reader.wrong_type(key, value, "a count or an array of device ids");
    }
  }
  return std::nullopt;
}

// port-range = [first, last].
std::optional<Error> read_port_range(const toml::node& node, const TableReader& reader,
                                     Config& config) {
  const auto* range = node.as_array();
  constexpr std::string_view kRange = "an array of two ports [first, last] within 1024-65535";
  if (!range || range->size() != 2 || !(*range)[0].is_integer() ||
      !(*range)[1].is_integer())
    return reader.wrong_type("port-range", node, kRange);
  const auto first = (*range)[0].value<int64_t>().value();
  const auto last = (*range)[1].value<int64_t>().value();
  if (first < 1024 || last > 65535 || first > last)
    return reader.error_at(node.source(),
                           fmt::format("key 'port-range' must be {}", kRange));
  config.port_first = static_cast<int>(first);
  config.port_last = static_cast<int>(last);
  return std::nullopt;
}

}  // namespace

std::optional<Error> read_top_level(const toml::table& table,
                                    const TableReader& reader,
                                    Config& config) {
  if (auto error = reader.check_keys(table, KnownKeys::top_level()))
    return error;
  if (const auto* node = table.get("jobs")) {
    const auto jobs = reader.integer("jobs", *node, 1, 4096);
    if (!jobs) return jobs.error();
    config.jobs = *jobs;
  }
  for (const auto& [key, target] :
       {std::pair{"timeout", &config.timeout}, std::pair{"slow", &config.slow},
        std::pair{"start-timeout", &config.start_timeout},
        std::pair{"grace-period", &config.grace_period},
        std::pair{"list-timeout", &config.list_timeout}}) {
    if (const auto* node = table.get(key)) {
      auto value = reader.duration(key, *node, std::string_view(key) != "grace-period");
      if (!value) return value.error();
      *target = *value;
    }
  }
  if (auto error = read_flag(table, reader, "bisect", config.bisect)) return error;
  if (auto error = read_flag(table, reader, "fail-fast", config.fail_fast)) return error;
  if (const auto* node = table.get("state-dir")) {
    if (!node->is_string()) return reader.wrong_type("state-dir", *node, "a path string");
    config.state_dir = config.root / node->value<std::string>().value();
  }
  if (const auto* node = table.get("devices"))
    if (auto error = read_devices(*node, reader, config)) return error;
  if (const auto* node = table.get("port-range"))
    if (auto error = read_port_range(*node, reader, config)) return error;
  if (const auto* node = table.get("max-output")) {
    auto bytes = reader.size("max-output", *node);
    if (!bytes) return bytes.error();
    config.max_output = *bytes;
  }
  if (auto error = reader.limits(table, config.defaults)) return error;
  if (auto error = read_choice(table, reader, "flaky", "pass", "fail", config.flaky_fails))
    return error;
  if (auto error = read_choice(table, reader, "network-fallback", "refuse", "host", config.network_fallback_host))
    return error;
  if (auto error = read_choice(table, reader, "allocation", "auto", "off", config.allocation_off))
    return error;
  if (const auto* node = table.get("suspicious-output")) {
    auto signatures = reader.strings("suspicious-output", *node);
    if (!signatures) return signatures.error();
    config.suspicious_output = std::move(*signatures);
  }
  if (const auto* node = table.get("junit")) {
    if (!node->is_string()) return reader.wrong_type("junit", *node, "a path string");
    config.junit = config.root / node->value<std::string>().value();
  }
  if (const auto* node = table.get("history")) {
    if (node->is_boolean() && !node->value<bool>().value()) config.history_off = true;
    else if (node->is_string()) config.history = config.root / node->value<std::string>().value();
    else return reader.wrong_type("history", *node, "a path string, or false");
  }
  if (const auto* node = table.get("history-runs")) {
    const auto runs = reader.integer("history-runs", *node, 1, 1'000'000);
    if (!runs) return runs.error();
    config.history_runs = static_cast<std::size_t>(*runs);
  }
  if (const auto* node = table.get("run-folders")) {
    const auto folders = reader.integer("run-folders", *node, 1, 1'000'000);
    if (!folders) return folders.error();
    config.run_folders = static_cast<std::size_t>(*folders);
  }
  if (const auto* node = table.get("html")) {
    if (!node->is_string()) return reader.wrong_type("html", *node, "a path string");
    config.html = config.root / node->value<std::string>().value();
  }
  for (const auto* kind : launchers::launcher_kinds())
    if (const auto* node = table.get(kind->name()))
      if (auto error = read_launcher(*node, *kind, reader.file(), config.root,
                                     config.launcher_tables[kind->id()]))
        return error;
  return std::nullopt;
}

}  // namespace ranktest::config
