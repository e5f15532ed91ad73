// The keys ranktest.toml accepts (docs/configuration.md describes each; a
// test checks it), the launchers' names and where a setting came from.
#include "config/config.h"

#include <fmt/format.h>

namespace ranktest::config {

std::string Place::to_string() const {
  if (line <= 0) return file;
  return fmt::format("{}:{}:{}", file, line, column);
}

std::string how_to_set(bool in_a_file, std::string_view kind, const std::vector<std::string>& paths,
                       std::string_view setting) {
  if (in_a_file) return fmt::format("set {} in this [[source]]", setting);
  std::string quoted;
  for (const auto& path : paths) quoted += fmt::format("{}\"{}\"", quoted.empty() ? "" : ", ", path);
  return fmt::format("no ranktest.toml names it: write one here holding [[source]] kind = \"{}\", "
                     "paths = [{}], {} (docs/configuration.md)",
                     kind, quoted, setting);
}

const std::vector<std::string>& KnownKeys::top_level() {
  static const std::vector<std::string> keys{
      "jobs",  "timeout", "start-timeout", "slow", "grace-period", "list-timeout", "fail-fast", "state-dir", "run-folders",
      "junit", "html", "history", "history-runs", "max-output", "devices", "port-range", "suspicious-output", "audit-children",
      "watch-workers", "isolation", "bisect",
      "max-processes", "max-memory", "retries", "retry-delay", "flaky", "launcher", "nodes",
      "network", "network-fallback", "allocation", "tmpdir", "source", "override", "hint", "quarantine"};
  // And each launcher's table.
  static const std::vector<std::string> with_launchers = [] {
    auto all = keys;
    for (const auto* kind : launchers::launcher_kinds()) all.emplace_back(kind->name());
    return all;
  }();
  return with_launchers;
}
const std::vector<std::string>& KnownKeys::source() {
  static const std::vector<std::string> keys{"kind", "paths", "args", "env",
                                             "cwd", "python", "mode", "launcher",
                                             "allow-empty", "fork-exit", "exclude",
                                             "list-timeout", "network", "tmpdir",
                                             "isolation"};
  return keys;
}
const std::vector<std::string>& KnownKeys::override_table() {
  static const std::vector<std::string> keys{
      "filter", "timeout", "start-timeout", "slow", "ranks", "devices", "exclusive", "labels", "leak",
      "audit-children", "watch-workers", "isolation", "max-processes", "max-memory", "retries",
      "retry-delay", "launcher", "nodes", "network", "tmpdir"};
  return keys;
}
const std::vector<std::string>& KnownKeys::launcher_table(Launcher launcher) {
  static const std::vector<std::string> none;
  const auto* kind = launchers::launcher_kind(launcher);
  return kind ? kind->table_keys() : none;
}

std::string_view launcher_name(Launcher launcher) { return launchers::launcher_name(launcher); }
std::string_view network_name(Network network) {
  return network == Network::isolated ? "isolated" : "host";
}
const std::vector<std::string>& KnownKeys::device_kinds() {
  static const std::vector<std::string> kinds{"cuda", "hip", "tpu", "cpu-sim"};
  return kinds;
}

}  // namespace ranktest::config
