// One [[source]] of ranktest.toml: a group of gtest binaries or a pytest suite.
#include <fmt/format.h>

#include <filesystem>

#include "config/config_tables.h"

namespace ranktest::config {

std::optional<Error> read_source(const toml::table& table,
                                 const TableReader& reader,
                                 SourceConfig& source) {
  if (auto error = reader.check_keys(table, KnownKeys::source())) return error;
  source.place = reader.place_of(table.source());
  if (const auto* node = table.get("kind")) {
    const auto kind = node->value<std::string>();
    if (!node->is_string() || (*kind != "gtest" && *kind != "pytest" && *kind != "ctest"))
      return node->is_string()
                 ? reader.error_at(node->source(),
                                   fmt::format("unknown source kind \"{}\" "
                                               "in [[source]]; known kinds "
                                               "are: gtest, pytest, ctest",
                                               *kind))
                 : reader.wrong_type("kind", *node, "\"gtest\", \"pytest\" or \"ctest\"");
    source.kind = *kind == "pytest"  ? SuiteKind::pytest
                  : *kind == "ctest" ? SuiteKind::ctest
                                     : SuiteKind::gtest;
  }
  // A ctest source runs each test exactly as CTest would: its command,
  // working directory and arguments are CTest's, and there is no fork
  // server, so keys that would change them are refused, not ignored.
  if (source.kind == SuiteKind::ctest)
    for (const char* key : {"args", "cwd", "mode", "fork-exit", "exclude"})
      if (const auto* node = table.get(key))
        return reader.error_at(
            node->source(),
            fmt::format("key '{}' in [[source]] is not for kind = \"ctest\" sources (CTest "
                        "says how each test runs); select tests with --filter instead",
                        key));
  if (const auto* node = table.get("python")) {
    if (!node->is_string() || node->value<std::string>()->empty())
      return reader.wrong_type("python", *node, "the interpreter's path or name, e.g. \"python3\"");
    if (source.kind != SuiteKind::pytest)
      return reader.error_at(node->source(),
                             "key 'python' in [[source]] is for kind = \"pytest\" sources only");
    source.python = node->value<std::string>().value();
  }
  // pytest sources fork each test from a server by default: a fresh
  // interpreter per test re-imports the suite each time (14x xdist on
  // numpy). A failure seen only when forked is confirmed in a fresh process
  // before it is reported, so the default costs no truth. gtest sources
  // stay plain unless asked.
  source.fork_server = source.kind == SuiteKind::pytest;
  if (const auto* node = table.get("mode")) {
    const auto mode = node->value<std::string>();
    if (!node->is_string() || (*mode != "plain" && *mode != "fork-server"))
      return reader.wrong_type("mode", *node, "\"plain\" or \"fork-server\"");
    source.fork_server = *mode == "fork-server";
  }
  if (const auto* node = table.get("isolation")) {
    if (source.kind == SuiteKind::ctest)
      return reader.error_at(node->source(),
                             "key 'isolation' in [[source]] is for kind = \"pytest\" and "
                             "\"gtest\" sources (ctest runs a process per test)");
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
    return reader.error_at(
        table.source(),
        source.kind == SuiteKind::ctest
            ? "[[source]] of kind = \"ctest\" needs 'paths': the build folders, e.g. "
              "paths = [\"build\"]"
            : "[[source]] needs 'paths', e.g. paths = [\"build/tests/*_test\"]");
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
