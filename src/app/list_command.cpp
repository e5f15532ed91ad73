#include "app/list_command.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "app/prepare.h"
#include "config/duration.h"
#include "frameworks/framework_kind.h"
#include "events/previous_durations.h"
#include "schedule/device_inventory.h"
#include "text/sanitize.h"

namespace ranktest::app {
namespace {

// How the test's process comes to be: "fork-server", "plain" or
// "collecting-workers" (its source's mode, named or chosen by its start-up).
std::string_view mode_of(const TestSource& source) {
  return source.fork_server          ? "fork-server"
         : source.collecting_workers ? "collecting-workers"
                                     : "plain";
}

// Whether it runs in a worker by its settings (a failure's fresh attempt
// aside): select::may_run_in_worker's rule.
bool in_worker(const TestCase& test, const select::ResolvedSettings& settings) {
  return settings.worker_isolation && settings.ranks == 1 && !settings.ranked &&
         !settings.audit_children && settings.network == Network::host &&
         settings.launcher == Launcher::local &&
         frameworks::framework_of(test.source->kind).worker_style(*test.source) !=
             frameworks::WorkerStyle::none;
}

nlohmann::ordered_json test_json(const TestCase& test,
                                 const select::ResolvedSettings& settings) {
  const auto utf8 = [](const std::string& s) { return text::repair_utf8(s); };
  nlohmann::ordered_json json{
      {"id", utf8(test.id)},
      {"name", utf8(std::string(test.name()))},
      {"kind", std::string(frameworks::framework_of(test.source->kind).name())},
      {"source", utf8(test.source->label)},
      {"executable", utf8(test.source->executable.string())},
      {"location", nullptr},
      {"type_param", utf8(test.detail().type_param)},
      {"value_param", utf8(test.detail().value_param)},
      {"skip_reason", test.skip_reason() ? nlohmann::ordered_json(*test.skip_reason())
                                       : nlohmann::ordered_json(nullptr)},
      {"timeout_ms", settings.timeout.count()},
      {"ranks", settings.ranks},
      {"slots", std::max(settings.ranks, settings.slots)},
      {"devices", settings.devices},
      {"exclusive", settings.exclusive},
      {"labels", settings.labels},
      {"network", std::string(config::network_name(settings.network))},
      {"isolation", in_worker(test, settings) ? "worker" : "test"},
      {"mode", std::string(mode_of(*test.source))},
      {"start_up_ms", test.source->start_up ? nlohmann::ordered_json(test.source->start_up->count())
                                            : nlohmann::ordered_json(nullptr)}};
  if (test.where.file)
    json["location"] = {{"file", utf8(*test.where.file)}, {"line", test.where.line}};
  return json;
}

}  // namespace

int list_command(const CommandLine& cli) {
  auto loaded = load_configuration(cli);
  if (auto* failure = std::get_if<Failure>(&loaded)) return fail(*failure);
  const config::Config config = std::move(std::get<config::Config>(loaded));
  // On stderr: the listing itself may be read by a program.
  for (const auto& found : config.implied)
    fmt::print(stderr, "ranktest: no ranktest.toml here; listing {}\n", found);
  process::SignalWatch signals;
  auto discovered = discover_tests(config, signals);
  if (auto* failure = std::get_if<Failure>(&discovered)) return fail(*failure);
  // Only a time partition needs durations: no database is opened otherwise.
  std::map<std::string, config::Duration> expected;
  if (cli.partition && cli.partition->strategy == select::Partition::Strategy::time)
    expected = expected_durations(config, open_history(config, false).get());
  keep_partition(std::get<std::vector<TestCase>>(discovered), cli, expected);

  std::vector<const TestCase*> selected;
  for (const auto& test : std::get<std::vector<TestCase>>(discovered))
    if (select::selection_matches(cli.selection, test)) selected.push_back(&test);
  // A test's settings as `run` would give them: CTest's resource groups
  // take devices of this machine's inventory.
  const auto capacity = schedule::device_counts(
      schedule::merge_inventory(config.devices, schedule::detect_devices("/dev")));
  std::map<std::string, std::vector<std::string>> absent;  // said by `run`, not here
  const auto settings_of = [&](const TestCase& test) {
    auto settings = select::resolve_settings(config, test);
    select::add_resource_group_devices(test, capacity, settings, absent);
    return settings;
  };

  if (cli.list_format == ListFormat::json) {
    // {"tests": [...]} written a test at a time, as one document indented
    // by 2 would be: a whole document of 100,000 tests held in memory
    // took 470 MB.
    std::string separator = "\n    ";
    fmt::print("{{\n  \"tests\": [");
    for (const auto* test : selected) {
      auto text = test_json(*test, settings_of(*test)).dump(2);
      for (auto at = text.find('\n'); at != std::string::npos; at = text.find('\n', at + 5))
        text.insert(at + 1, "    ");
      fmt::print("{}{}", separator, text);
      separator = ",\n    ";
    }
    fmt::print("{}]\n}}\n", selected.empty() ? "" : "\n  ");
    return to_int(ExitCode::success);
  }
  std::size_t skipped = 0;
  for (const auto* test : selected) {
    const auto settings = settings_of(*test);
    std::vector<std::string> notes;
    if (test->skip_reason()) {
      notes.push_back(fmt::format("skipped: {}", *test->skip_reason()));
      ++skipped;
    }
    if (settings.ranks > 1) notes.push_back(fmt::format("ranks {}", settings.ranks));
    if (settings.slots > settings.ranks) notes.push_back(fmt::format("slots {}", settings.slots));
    for (const auto& [kind, count] : settings.devices)
      notes.push_back(fmt::format("{} {}", kind, count));
    if (settings.exclusive) notes.push_back("exclusive");
    if (settings.network == Network::isolated) notes.push_back("isolated network");
    if (settings.timeout != config.timeout)
      notes.push_back(fmt::format("timeout {}", config::format_duration(settings.timeout)));
    for (const auto& label : settings.labels) notes.push_back("label " + label);
    fmt::print("{}{}\n", text::terminal_safe(test->id),
               notes.empty() ? "" : fmt::format("  [{}]", fmt::join(notes, ", ")));
  }
  std::fflush(stdout);
  fmt::print(stderr, "ranktest: {} test{} ({} skipped)\n", selected.size(),
             selected.size() == 1 ? "" : "s", skipped);
  return to_int(ExitCode::success);
}

}  // namespace ranktest::app
