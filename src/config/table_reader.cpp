#include "config/table_reader.h"

#include <fmt/format.h>

#include <algorithm>

#include "config/byte_size.h"
#include "text/word_list.h"

namespace ranktest::config {
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

std::string join(const std::vector<std::string>& keys) {
  std::string out;
  for (const auto& key : keys) out += (out.empty() ? "" : ", ") + key;
  return out;
}

}  // namespace

Place TableReader::place_of(const toml::source_region& region) const {
  return Place{file_, static_cast<int>(region.begin.line), static_cast<int>(region.begin.column)};
}

Error TableReader::error_at(const toml::source_region& region, const std::string& message) const {
  return Error{fmt::format("{}: {}", place_of(region).to_string(), message)};
}

std::optional<Error> TableReader::check_keys(const toml::table& table,
                                             const std::vector<std::string>& known,
                                             std::string_view docs) const {
  for (const auto& [key, node] : table) {
    if (std::find(known.begin(), known.end(), key.str()) != known.end()) continue;
    return error_at(key.source(), fmt::format("unknown key '{}'{}; known keys are: {} (see {})",
                                              key.str(), context_, join(known), docs));
  }
  return std::nullopt;
}

Error TableReader::wrong_type(std::string_view key, const toml::node& node,
                              std::string_view expected) const {
  return error_at(node.source(), fmt::format("key '{}'{} must be {}, not {}", key, context_,
                                             expected, type_name(node.type())));
}

Expected<Duration> TableReader::duration(std::string_view key, const toml::node& node,
                                         bool positive) const {
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

Expected<std::uint64_t> TableReader::size(std::string_view key, const toml::node& node) const {
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

Expected<int> TableReader::integer(std::string_view key, const toml::node& node, int min,
                                  int max) const {
  const auto value = node.value<int64_t>();
  if (!node.is_integer())
    return wrong_type(key, node, fmt::format("an integer from {} to {}", min, max));
  // An integer out of range is named by its value, not its type.
  if (*value < min || *value > max)
    return error_at(node.source(), fmt::format("key '{}'{} must be an integer from {} to {}, not {}",
                                               key, context_, min, max, *value));
  return static_cast<int>(*value);
}

std::optional<Error> TableReader::limits(const toml::table& table, TestSettings& settings) const {
  if (const auto* node = table.get("audit-children")) {
    if (!node->is_boolean()) return wrong_type("audit-children", *node, "true or false");
    settings.audit_children = node->value<bool>().value();
  }
  if (const auto* node = table.get("watch-workers")) {
    if (!node->is_boolean()) return wrong_type("watch-workers", *node, "true or false");
    settings.watch_workers = node->value<bool>().value();
  }
  if (const auto* node = table.get("isolation")) {
    const auto worker = worker_isolation(*node);
    if (!worker) return worker.error();
    settings.worker_isolation = *worker;
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

std::optional<Error> TableReader::containment(const toml::table& table,
                                              std::optional<Network>& network,
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

Expected<bool> TableReader::worker_isolation(const toml::node& node) const {
  const auto text = node.value<std::string>();
  if (!text || !node.is_string()) return wrong_type("isolation", node, "\"test\" or \"worker\"");
  if (*text != "test" && *text != "worker")
    return error_at(node.source(),
                    fmt::format("key 'isolation'{} is \"{}\"; write \"test\" (a process per "
                                "test) or \"worker\" (processes that run test after test)",
                                context_, *text));
  return *text == "worker";
}

Expected<Launcher> TableReader::launcher(const toml::node& node) const {
  const auto name = node.value<std::string>();
  if (node.is_string())
    if (const auto launcher = launchers::launcher_named(*name)) return *launcher;
  std::vector<std::string> names{"\"local\""};
  for (const auto* kind : launchers::launcher_kinds())
    names.push_back(fmt::format("\"{}\"", kind->name()));
  return wrong_type("launcher", node, text::word_list(names));
}

Expected<std::vector<std::string>> TableReader::strings(std::string_view key,
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

}  // namespace ranktest::config
