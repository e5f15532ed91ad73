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

// TOML text as a table; a syntax error names file:line:column.
Expected<toml::table> parse_toml(std::string_view toml_text, const std::string& file_name) {
  try {
    return toml::parse(toml_text, file_name);
  } catch (const toml::parse_error& error) {
    const auto& begin = error.source().begin;
    return Error{fmt::format("{}:{}:{}: invalid TOML: {}", file_name, begin.line, begin.column,
                             error.description())};
  }
}

// A file's text; one that cannot be read is an error naming it and the
// option that gave it.
Expected<std::string> read_text(const std::filesystem::path& path, std::string_view what,
                                std::string_view option) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Error{fmt::format("{}: cannot read the {} file; check the path given to {}",
                             path.string(), what, option)};
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

Expected<Config> parse_config(std::string_view toml_text,
                              const std::string& file_name,
                              const std::filesystem::path& root) {
  auto parsed = parse_toml(toml_text, file_name);
  if (!parsed) return parsed.error();
  const toml::table& table = *parsed;
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
  const auto text = read_text(path, "quarantine", "--quarantine");
  if (!text) return text.error();
  const auto file_name = path.string();
  const auto table = parse_toml(*text, file_name);
  if (!table) return table.error();
  const TableReader top(file_name, "");
  if (auto error = top.check_keys(*table, {"quarantine"})) return *error;
  std::vector<QuarantineEntry> entries;
  if (auto error = read_table_array(*table, file_name, "quarantine", entries,
                                    read_quarantine_entry))
    return *error;
  return entries;
}

Expected<Config> load_config_file(const std::filesystem::path& path) {
  const auto text = read_text(path, "configuration", "--config");
  if (!text) return text.error();
  auto root = path.parent_path();
  if (root.empty()) root = ".";
  auto config = parse_config(*text, path.string(), root);
  if (config) config->file = path;
  return config;
}

}  // namespace ranktest::config
