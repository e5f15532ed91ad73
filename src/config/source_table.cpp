// One [[source]] of ranktest.toml: tests of one framework (gtest binaries, a
// pytest suite, CTest build folders), its rules asked of frameworks/.
#include <fmt/format.h>

#include <filesystem>

#include "config/config_tables.h"
#include "frameworks/framework_kind.h"
#include "text/word_list.h"

namespace ranktest::config {
namespace {

// "\"gtest\", \"pytest\" or \"ctest\"": what `kind` may be.
std::string quoted_choices() {
  std::vector<std::string> names;
  for (const auto* framework : frameworks::all_frameworks())
    names.push_back(fmt::format("\"{}\"", framework->name()));
  return text::word_list(names);
}

}  // namespace

std::optional<Error> read_source(const toml::table& table,
                                 const TableReader& reader,
                                 SourceConfig& source) {
  if (auto error = reader.check_keys(table, KnownKeys::source())) return error;
  source.place = reader.place_of(table.source());
  const auto* framework = &frameworks::framework_of(source.kind);
  if (const auto* node = table.get("kind")) {
    const auto kind = node->value<std::string>();
    framework = kind ? frameworks::framework_named(*kind) : nullptr;
    if (!framework)
      return node->is_string()
                 ? reader.error_at(node->source(),
                                   fmt::format("unknown source kind \"{}\" in [[source]]; "
                                               "known kinds are: {}",
                                               *kind, frameworks::framework_names()))
                 : reader.wrong_type("kind", *node, quoted_choices());
    source.kind = framework->id();
  }
  const auto rules = framework->source_rules();
  for (const auto& [key, why] : rules.refused_keys)
    if (const auto* node = table.get(key))
      return reader.error_at(node->source(),
                             fmt::format("key '{}' in [[source]] {}", key, why));
  if (const auto* node = table.get("python")) {
    if (!node->is_string() || node->value<std::string>()->empty())
      return reader.wrong_type("python", *node, "the interpreter's path or name, e.g. \"python3\"");
    source.python = node->value<std::string>().value();
  }
  source.fork_server = rules.fork_server_by_default;
  if (const auto* node = table.get("mode")) {
    const auto mode = node->value<std::string>();
    if (!node->is_string() ||
        (*mode != "plain" && *mode != "fork-server" && *mode != "collecting-workers"))
      return reader.wrong_type("mode", *node,
                               "\"plain\", \"fork-server\" or (pytest) \"collecting-workers\"");
    if (*mode == "collecting-workers" && source.kind != SuiteKind::pytest)
      return reader.error_at(node->source(),
                             "mode = \"collecting-workers\" is for pytest sources (a worker that "
                             "collects the suite itself); use \"plain\" or \"fork-server\"");
    source.fork_server = *mode == "fork-server";
    source.collecting_workers = *mode == "collecting-workers";
    source.mode_given = true;
  }
  if (const auto* node = table.get("isolation")) {
    const auto worker = reader.worker_isolation(*node);
    if (!worker) return worker.error();
    source.worker_isolation = *worker;
  }
  if (const auto* node = table.get("fork-exit")) {
    const auto exit = node->value<std::string>();
    if (!node->is_string() || (*exit != "fast" && *exit != "full"))
      return reader.wrong_type("fork-exit", *node, "\"fast\" or \"full\"");
    source.fork_exit_full = *exit == "full";
  }
  if (const auto* node = table.get("launcher")) {
    auto launcher = reader.launcher(*node);
    if (!launcher) return launcher.error();
    source.launcher = *launcher;
  }
  if (auto error = reader.containment(table, source.network, source.private_tmpdir,
                                      source.launcher))
    return error;
  if (const auto* node = table.get("allow-empty")) {
    if (!node->is_boolean()) return reader.wrong_type("allow-empty", *node, "true or false");
    source.allow_empty = node->value<bool>().value();
  }
  const auto* paths = table.get("paths");
  if (!paths)
    return reader.error_at(table.source(), std::string(rules.missing_paths));
  auto path_list = reader.strings("paths", *paths);
  if (!path_list) return path_list.error();
  source.paths = std::move(*path_list);
  if (const auto* node = table.get("exclude")) {
    auto globs = reader.strings("exclude", *node);
    if (!globs) return globs.error();
    source.exclude = std::move(*globs);
  }
  if (const auto* node = table.get("list-timeout")) {
    auto value = reader.duration("list-timeout", *node, true);
    if (!value) return value.error();
    source.list_timeout = *value;
  }
  if (const auto* node = table.get("args")) {
    auto args = reader.strings("args", *node);
    if (!args) return args.error();
    source.args = std::move(*args);
  }
  if (const auto* node = table.get("env")) {
    const auto* env = node->as_table();
    if (!env) return reader.wrong_type("env", *node, "a table of strings");
    for (const auto& [name, value] : *env) {
      if (!value.is_string())
        return reader.wrong_type(fmt::format("env.{}", name.str()), value,
                                 "a string");
      source.env[std::string(name.str())] = value.value<std::string>().value();
    }
  }
  if (const auto* node = table.get("cwd")) {
    if (!node->is_string()) return reader.wrong_type("cwd", *node, "a path string");
    source.working_directory = node->value<std::string>().value();
    // Relative to the configuration's folder, as the tests will see it;
    // missing, every test would fail to start with the program's name in
    // the message instead of the folder's.
    auto folder = std::filesystem::path(source.working_directory);
    if (folder.is_relative()) {
      const auto root = std::filesystem::path(reader.file()).parent_path();
      folder = (root.empty() ? std::filesystem::path(".") : root) / folder;
    }
    std::error_code error;
    if (!std::filesystem::is_directory(folder, error))
      return reader.error_at(node->source(),
                             fmt::format("cwd = \"{}\": no such folder ({}); create it or "
                                         "correct cwd",
                                         source.working_directory.string(), folder.string()));
  }
  return std::nullopt;
}

}  // namespace ranktest::config
