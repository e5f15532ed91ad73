#include "config/config_loader.h"

#include "config/byte_size.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <toml++/toml.h>

namespace ranktest::config {

std::string Place::to_string() const {
  if (line <= 0) return file;
  return fmt::format("{}:{}:{}", file, line, column);
}

const std::vector<std::string>& KnownKeys::top_level() {
  static const std::vector<std::string> keys{
      "jobs",  "timeout", "slow", "grace-period", "fail-fast", "state-dir",
      "junit", "html", "history", "max-output", "devices", "port-range", "suspicious-output", "audit-children",
      "max-processes", "max-memory", "retries", "retry-delay", "flaky", "launcher", "nodes",
      "network", "network-fallback", "tmpdir", "source", "override", "hint", "mpirun", "slurm"};
  return keys;
}
const std::vector<std::string>& KnownKeys::source() {
  static const std::vector<std::string> keys{"kind", "paths", "args", "env",
                                             "cwd", "python", "mode", "launcher",
                                             "allow-empty", "fork-exit", "network", "tmpdir"};
  return keys;
}
const std::vector<std::string>& KnownKeys::override_table() {
  static const std::vector<std::string> keys{
      "filter", "timeout", "slow", "ranks", "devices", "exclusive", "labels", "leak",
      "audit-children", "max-processes", "max-memory", "retries", "retry-delay", "launcher",
      "nodes", "network", "tmpdir"};
  return keys;
}
const std::vector<std::string>& KnownKeys::launcher_table(Launcher launcher) {
  static const std::vector<std::string> mpirun{"command", "args", "hostfile"};
  static const std::vector<std::string> slurm{"command", "args"};
  return launcher == Launcher::mpirun ? mpirun : slurm;
}

std::string_view launcher_name(Launcher launcher) {
  switch (launcher) {
    case Launcher::local: return "local";
    case Launcher::mpirun: return "mpirun";
    case Launcher::slurm: return "slurm";
  }
  return "local";
}
std::string_view network_name(Network network) {
  return network == Network::isolated ? "isolated" : "host";
}

const std::vector<std::string>& KnownKeys::device_kinds() {
  static const std::vector<std::string> kinds{"cuda", "hip", "tpu", "cpu-sim"};
  return kinds;
}

namespace {

std::string_view type_name(toml::node_type type) {
  switch (type) {
    case toml::node_type::none: return "nothing";
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a float";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::date: return "a date";
    case toml::node_type::time: return "a time";
    case toml::node_type::date_time: return "a date-time";
  }
  return "a value";
}

// A scalar as written in TOML, for an error message.
std::string toml_text(const toml::node& node) {
  if (const auto* value = node.as_floating_point()) return fmt::format("{}", value->get());
  if (const auto* integer = node.as_integer()) return fmt::format("{}", integer->get());
  return std::string(type_name(node.type()));
}

// Reads one table of ranktest.toml, turning every problem into an Error that
// names file:line:column and the key.
class TableReader {
 public:
  TableReader(const std::string& file, std::string context)
      : file_(file), context_(std::move(context)) {}

  const std::string& file() const { return file_; }

  Place place_of(const toml::source_region& region) const {
    return Place{file_, static_cast<int>(region.begin.line),
                 static_cast<int>(region.begin.column)};
  }

  Error error_at(const toml::source_region& region,
                 const std::string& message) const {
    return Error{fmt::format("{}: {}", place_of(region).to_string(), message)};
  }

  std::optional<Error> check_keys(const toml::table& table,
                                  const std::vector<std::string>& known) const {
    for (const auto& [key, node] : table) {
      if (std::find(known.begin(), known.end(), key.str()) != known.end())
        continue;
      return error_at(key.source(),
                      fmt::format("unknown key '{}'{}; known keys are: {} "
                                  "(see docs/configuration.md)",
                                  key.str(), context_, join(known)));
    }
    return std::nullopt;
  }

  Error wrong_type(std::string_view key, const toml::node& node,
                   std::string_view expected) const {
    return error_at(node.source(),
                    fmt::format("key '{}'{} must be {}, not {}", key, context_,
                                expected, type_name(node.type())));
  }

  // A duration from 0 (or above 0, when `positive`) to 30 days.
  Expected<Duration> duration(std::string_view key, const toml::node& node,
                              bool positive = false) const {
    const std::string expected = fmt::format(
        "a duration{}: a number of seconds or a string such as \"90s\", \"5m\", \"250ms\", "
        "at most 30 days",
        positive ? " above 0" : "");
    std::optional<Duration> parsed;
    if (auto seconds = node.value<double>(); seconds && !node.is_string()) {
      parsed = duration_from_seconds(*seconds);
    } else if (const auto* text = node.as_string()) {
      parsed = parse_duration(text->get());
      if (!parsed || (positive && parsed->count() == 0))
        return error_at(node.source(),
                        fmt::format("key '{}'{} has the value \"{}\", which is not {}", key,
                                    context_, text->get(), expected));
    } else {
      return wrong_type(key, node, expected);
    }
    if (!parsed || (positive && parsed->count() == 0))
      return error_at(node.source(),
                      fmt::format("key '{}'{} has the value {}, which is not {}", key, context_,
                                  toml_text(node), expected));
    return *parsed;
  }

  Expected<std::uint64_t> size(std::string_view key, const toml::node& node) const {
    constexpr std::string_view kSize =
        "a size: bytes, or a string such as \"100MiB\", \"64MB\", \"512KiB\"";
    if (node.is_integer() && node.value<int64_t>().value() >= 0)
      return static_cast<std::uint64_t>(node.value<int64_t>().value());
    if (const auto* text = node.as_string()) {
      if (const auto parsed = parse_size(text->get())) return *parsed;
      return error_at(node.source(),
                      fmt::format("key '{}'{} has the value \"{}\", which is not {}", key,
                                  context_, text->get(), kSize));
    }
    return wrong_type(key, node, kSize);
  }

  // A whole number from `min` to `max`; anything else names the range.
  Expected<int> integer(std::string_view key, const toml::node& node, int min, int max) const {
    const auto value = node.value<int64_t>();
    if (!node.is_integer() || *value < min || *value > max)
      return wrong_type(key, node, fmt::format("an integer from {} to {}", min, max));
    return static_cast<int>(*value);
  }

  // The settings a test can get both from the top level (every test's
  // default) and from an [[override]].
  std::optional<Error> limits(const toml::table& table, TestSettings& settings) const {
    if (const auto* node = table.get("audit-children")) {
      if (!node->is_boolean()) return wrong_type("audit-children", *node, "true or false");
      settings.audit_children = node->value<bool>().value();
    }
    if (const auto* node = table.get("max-processes")) {
      const auto count = integer("max-processes", *node, 1, 4194304);
      if (!count) return count.error();
      settings.max_processes = *count;
    }
    if (const auto* node = table.get("max-memory")) {
      auto bytes = size("max-memory", *node);
      if (!bytes) return bytes.error();
      // Below this no interpreter or test binary even starts: the limit
      // would fail every test with a riddle instead of measuring it.
      constexpr std::uint64_t kFloor = 16ull << 20;
      if (*bytes < kFloor)
        return error_at(node->source(),
                        fmt::format("key 'max-memory'{} is {}, below the {} that any test "
                                    "process needs to start; write e.g. \"512MiB\"",
                                    context_, format_size(*bytes), format_size(kFloor)));
      settings.max_memory = *bytes;
    }
    if (const auto* node = table.get("retries")) {
      const auto count = integer("retries", *node, 0, 100);
      if (!count) return count.error();
      settings.retries = *count;
    }
    if (const auto* node = table.get("retry-delay")) {
      auto delay = duration("retry-delay", *node);
      if (!delay) return delay.error();
      settings.retry_delay = *delay;
    }
    if (const auto* node = table.get("launcher")) {
      auto launcher = this->launcher(*node);
      if (!launcher) return launcher.error();
      settings.launcher = *launcher;
    }
    if (const auto* node = table.get("nodes")) {
      const auto count = integer("nodes", *node, 1, 100000);
      if (!count) return count.error();
      settings.nodes = *count;
    }
    return containment(table, settings.network, settings.private_tmpdir, settings.launcher);
  }

  // network and tmpdir, which the top level, [[source]] and [[override]]
  // all take. A table that isolates the network of ranks mpirun or srun
  // starts is refused here; settings from different tables meet in the
  // plan (select::network_conflict).
  std::optional<Error> containment(const toml::table& table, std::optional<Network>& network,
                                   std::optional<bool>& private_tmpdir,
                                   const std::optional<Launcher>& launcher) const {
    if (const auto* node = table.get("network")) {
      const auto name = node->value<std::string>();
      if (!node->is_string() || (*name != "host" && *name != "isolated"))
        return wrong_type("network", *node, "\"host\" or \"isolated\"");
      network = *name == "isolated" ? Network::isolated : Network::host;
      if (network == Network::isolated && launcher && *launcher != Launcher::local)
        return error_at(node->source(),
                        fmt::format("network = \"isolated\"{} cannot apply to ranks that "
                                    "launcher = \"{}\" starts (they may span nodes, and one "
                                    "namespace cannot hold them); use network = \"host\" or "
                                    "launcher = \"local\"",
                                    context_, launcher_name(*launcher)));
    }
    if (const auto* node = table.get("tmpdir")) {
      const auto name = node->value<std::string>();
      if (!node->is_string() || (*name != "shared" && *name != "private"))
        return wrong_type("tmpdir", *node, "\"shared\" or \"private\"");
      private_tmpdir = *name == "private";
    }
    return std::nullopt;
  }

  Expected<Launcher> launcher(const toml::node& node) const {
    const auto name = node.value<std::string>();
    for (const auto launcher : {Launcher::local, Launcher::mpirun, Launcher::slurm})
      if (node.is_string() && *name == launcher_name(launcher)) return launcher;
    return wrong_type("launcher", node, "\"local\", \"mpirun\" or \"slurm\"");
  }

  Expected<std::vector<std::string>> strings(std::string_view key,
                                             const toml::node& node) const {
    const auto* array = node.as_array();
    if (!array) return wrong_type(key, node, "an array of strings");
    std::vector<std::string> out;
    for (const auto& element : *array) {
      const auto* text = element.as_string();
      if (!text) return wrong_type(key, element, "an array of strings");
      out.push_back(text->get());
    }
    return out;
  }

 private:
  static std::string join(const std::vector<std::string>& keys) {
    std::string out;
    for (const auto& key : keys) out += (out.empty() ? "" : ", ") + key;
    return out;
  }

  const std::string& file_;
  std::string context_;
};

// [mpirun] or [slurm].
std::optional<Error> read_launcher(const toml::node& node, Launcher launcher,
                                   const std::string& file, const std::filesystem::path& root,
                                   LauncherConfig& into) {
  const auto name = launcher_name(launcher);
  const auto* table = node.as_table();
  if (!table)
    return TableReader(file, "").wrong_type(name, node,
                                            fmt::format("a table, written [{}]", name));
  const TableReader reader(file, fmt::format(" in [{}]", name));
  if (auto error = reader.check_keys(*table, KnownKeys::launcher_table(launcher))) return error;
  if (const auto* command = table->get("command")) {
    if (!command->is_string() || command->value<std::string>()->empty())
      return reader.wrong_type("command", *command,
                               fmt::format("the launcher's name or path, e.g. \"{}\"",
                                           launcher == Launcher::mpirun ? "mpirun" : "srun"));
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
  return std::nullopt;
}

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
        std::pair{"grace-period", &config.grace_period}}) {
    if (const auto* node = table.get(key)) {
      auto value = reader.duration(key, *node, std::string_view(key) != "grace-period");
      if (!value) return value.error();
      *target = *value;
    }
  }
  if (const auto* node = table.get("fail-fast")) {
    if (!node->is_boolean()) return reader.wrong_type("fail-fast", *node, "true or false");
    config.fail_fast = node->value<bool>().value();
  }
  if (const auto* node = table.get("state-dir")) {
    if (!node->is_string()) return reader.wrong_type("state-dir", *node, "a path string");
    config.state_dir = config.root / node->value<std::string>().value();
  }
  if (const auto* node = table.get("devices")) {
    const auto* kinds = node->as_table();
    if (!kinds) return reader.wrong_type("devices", *node, "a table, written [devices]");
    for (const auto& [kind, value] : *kinds) {
      const std::string key = "devices." + std::string(kind.str());
      auto& ids = config.devices[std::string(kind.str())];
      if (auto count = value.value<int64_t>(); count && value.is_integer()) {
        if (*count < 0 || *count > 4096)
          return reader.wrong_type(key, value, "a count from 0 to 4096 or an array of ids");
        for (int64_t i = 0; i < *count; ++i) ids.push_back(std::to_string(i));
      } else if (const auto* array = value.as_array()) {
        for (const auto& id : *array) {
          if (id.is_integer()) ids.push_back(std::to_string(id.value<int64_t>().value()));
          else if (id.is_string()) ids.push_back(id.value<std::string>().value());
          else return reader.wrong_type(key, id, "an array of device ids (integers or strings)");
        }
      } else {
        return reader.wrong_type(key, value, "a count or an array of device ids");
      }
    }
  }
  if (const auto* node = table.get("port-range")) {
    const auto* range = node->as_array();
    constexpr std::string_view kRange = "an array of two ports [first, last] within 1024-65535";
    if (!range || range->size() != 2 || !(*range)[0].is_integer() ||
        !(*range)[1].is_integer())
      return reader.wrong_type("port-range", *node, kRange);
    const auto first = (*range)[0].value<int64_t>().value();
    const auto last = (*range)[1].value<int64_t>().value();
    if (first < 1024 || last > 65535 || first > last)
      return reader.error_at(node->source(),
                             fmt::format("key 'port-range' must be {}", kRange));
    config.port_first = static_cast<int>(first);
    config.port_last = static_cast<int>(last);
  }
  if (const auto* node = table.get("max-output")) {
    auto bytes = reader.size("max-output", *node);
    if (!bytes) return bytes.error();
    config.max_output = *bytes;
  }
  if (auto error = reader.limits(table, config.defaults)) return error;
  if (const auto* node = table.get("flaky")) {
    const auto* text = node->as_string();
    if (!text || (text->get() != "pass" && text->get() != "fail"))
      return reader.wrong_type("flaky", *node, "\"pass\" or \"fail\"");
    config.flaky_fails = text->get() == "fail";
  }
  if (const auto* node = table.get("network-fallback")) {
    const auto* text = node->as_string();
    if (!text || (text->get() != "refuse" && text->get() != "host"))
      return reader.wrong_type("network-fallback", *node, "\"refuse\" or \"host\"");
    config.network_fallback_host = text->get() == "host";
  }
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
  if (const auto* node = table.get("html")) {
    if (!node->is_string()) return reader.wrong_type("html", *node, "a path string");
    config.html = config.root / node->value<std::string>().value();
  }
  for (const auto& [launcher, into] :
       {std::pair{Launcher::mpirun, &config.mpirun}, std::pair{Launcher::slurm, &config.slurm}}) {
    const auto name = launcher_name(launcher);
    if (const auto* node = table.get(name))
      if (auto error = read_launcher(*node, launcher, reader.file(), config.root, *into))
        return error;
  }
  return std::nullopt;
}

std::optional<Error> read_source(const toml::table& table,
                                 const TableReader& reader,
                                 SourceConfig& source) {
  if (auto error = reader.check_keys(table, KnownKeys::source())) return error;
  source.place = reader.place_of(table.source());
  if (const auto* node = table.get("kind")) {
    const auto kind = node->value<std::string>();
    if (!node->is_string() || (*kind != "gtest" && *kind != "pytest"))
      return node->is_string()
                 ? reader.error_at(node->source(),
                                   fmt::format("unknown source kind \"{}\" "
                                               "in [[source]]; known kinds "
                                               "are: gtest, pytest",
                                               *kind))
                 : reader.wrong_type("kind", *node, "\"gtest\" or \"pytest\"");
    source.kind = *kind == "pytest" ? SuiteKind::pytest : SuiteKind::gtest;
  }
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
        "[[source]] needs 'paths', e.g. paths = [\"build/tests/*_test\"]");
  auto path_list = reader.strings("paths", *paths);
  if (!path_list) return path_list.error();
  source.paths = std::move(*path_list);
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
  }
  return std::nullopt;
}

std::optional<Error> read_override(const toml::table& table,
                                   const TableReader& reader,
                                   Override& entry) {
  if (auto error = reader.check_keys(table, KnownKeys::override_table()))
    return error;
  entry.place = reader.place_of(table.source());
  const auto* filter = table.get("filter");
  if (!filter)
    return reader.error_at(table.source(),
                           "[[override]] needs 'filter', e.g. filter = "
                           "\"Suite.*\"");
  if (!filter->is_string()) return reader.wrong_type("filter", *filter, "a string");
  entry.filter = filter->value<std::string>().value();
  if (const auto* node = table.get("timeout")) {
    auto value = reader.duration("timeout", *node, true);
    if (!value) return value.error();
    entry.settings.timeout = *value;
  }
  if (const auto* node = table.get("slow")) {
    auto value = reader.duration("slow", *node, true);
    if (!value) return value.error();
    entry.settings.slow = *value;
  }
  if (const auto* node = table.get("ranks")) {
    const auto ranks = reader.integer("ranks", *node, 1, 1024);
    if (!ranks) return ranks.error();
    entry.settings.ranks = *ranks;
  }
  if (const auto* node = table.get("devices")) {
    const auto* kinds = node->as_table();
    if (!kinds)
      return reader.wrong_type("devices", *node,
                               "a table of counts, e.g. devices = { cuda = 2 }");
    std::map<std::string, int> devices;
    for (const auto& [kind, count] : *kinds) {
      const auto value = count.value<int64_t>();
      if (!count.is_integer() || *value < 0 || *value > 4096)
        return reader.wrong_type(fmt::format("devices.{}", kind.str()), count,
                                 "a count from 0 to 4096");
      if (*value > 0) devices[std::string(kind.str())] = static_cast<int>(*value);
    }
    entry.settings.devices = std::move(devices);
  }
  if (const auto* node = table.get("exclusive")) {
    if (!node->is_boolean()) return reader.wrong_type("exclusive", *node, "true or false");
    entry.settings.exclusive = node->value<bool>().value();
  }
  if (const auto* node = table.get("leak")) {
    const auto value = node->value<std::string>();
    if (!node->is_string() || (*value != "fail" && *value != "warn"))
      return reader.wrong_type("leak", *node, "\"fail\" or \"warn\"");
    entry.settings.leak_is_failure = *value == "fail";
  }
  if (const auto* node = table.get("labels")) {
    auto labels = reader.strings("labels", *node);
    if (!labels) return labels.error();
    entry.settings.labels = std::move(*labels);
  }
  if (auto error = reader.limits(table, entry.settings)) return error;
  return std::nullopt;
}

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
  return config;
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
