#include "config/config_loader.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>
#include <toml++/toml.h>

#include "config/config_tables.h"
#include "config/quarantine.h"

namespace ranktest::config {
namespace {

// Reads `[[name]]`: an array of tables, each read by `read_one`.
template <typename Item, typename ReadOne>
std::optional<Error> read_table_array(const toml::table& root,
                                      const std::string& file,
                                      std::string_view name,
                                      std::vector<Item>& out,
                                      ReadOne read_one) {
  const auto* node = root.get(name);
  if (!node) return std::nullopt;
  const TableReader top(file, "");
  const auto* array = node->as_array();
  if (!array || !array->is_array_of_tables())
    return top.wrong_type(name, *node,
                          fmt::format("an array of tables, written [[{}]]", name));
  for (const auto& element : *array) {
    const TableReader reader(file, fmt::format(" in [[{}]]", name));
    Item item;
    if (auto error = read_one(*element.as_table(), reader, item)) return error;
    out.push_back(std::move(item));
  }
  return std::nullopt;
}

}  // namespace

Expected<Config> parse_config(std::string_view toml_text,
                              const std::string& file_name,
                              const std::filesystem::path& root) {
  toml::table table;
  try {
    table = toml::parse(toml_text, file_name);
  } catch (const toml::parse_error& error) {
    const auto& begin = error.source().begin;
    return Error{fmt::format("{}:{}:{}: invalid TOML: {}", file_name,
                             begin.line, begin.column, error.description())};
  }
  Config config;
  config.root = root;
  config.state_dir = root / config.state_dir;
  const TableReader top(file_name, "");
  if (auto error = read_top_level(table, top, config)) return *error;
  if (auto error = read_table_array(table, file_name, "source", config.sources,
                                    read_source))
    return *error;
  if (table.contains("hint")) {
    auto hints = parse_hints(toml_text, file_name);
    if (!hints) return hints.error();
    config.hints = std::move(*hints);
  }
  if (auto error = read_table_array(table, file_name, "override",
                                    config.overrides, read_override))
    return *error;
  if (auto error = read_table_array(table, file_name, "quarantine", config.quarantine,
                                    read_quarantine_entry))
    return *error;
  return config;
}

Expected<std::vector<QuarantineEntry>> load_quarantine_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Error{fmt::format("{}: cannot read the quarantine file; check the path given to "
                             "--quarantine",
                             path.string())};
  std::stringstream text;
  text << in.rdbuf();
  const auto file_name = path.string();
  toml::table table;
  try {
    table = toml::parse(text.str(), file_name);
  } catch (const toml::parse_error& error) {
    const auto& begin = error.source().begin;
    return Error{fmt::format("{}:{}:{}: invalid TOML: {}", file_name, begin.line, begin.column,
                             error.description())};
  }
  const TableReader top(file_name, "");
  if (auto error = top.check_keys(table, {"quarantine"})) return *error;
  std::vector<QuarantineEntry> entries;
  if (auto error = read_table_array(table, file_name, "quarantine", entries,
                                    read_quarantine_entry))
    return *error;
  return entries;
}

Expected<Config> load_config_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Error{fmt::format("{}: cannot read the configuration file; check "
                             "the path given to --config",
                             path.string())};
  std::stringstream text;
  text << in.rdbuf();
  auto root = path.parent_path();
  if (root.empty()) root = ".";
  auto config = parse_config(text.str(), path.string(), root);
  if (config) config->file = path;
  return config;
}

}  // namespace ranktest::config
