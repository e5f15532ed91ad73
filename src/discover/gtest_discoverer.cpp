#include "discover/gtest_discoverer.h"

#include <fmt/format.h>

#include <set>
#include <sstream>

#include "discover/gtest_listing.h"
#include "discover/source_paths.h"
#include "process/exit_status.h"
#include "process/run_to_completion.h"
#include "process/temporary_directory.h"
#include "text/file_tail.h"
#include "text/sanitize.h"

namespace ranktest::discover {
namespace {

// The first lines of what a binary printed, indented, for an error message.
std::string quote_output(const std::string& out, const std::string& err) {
  std::string quoted;
  int lines = 0;
  for (const auto* stream : {&out, &err}) {
    std::istringstream in(*stream);
    std::string line;
    while (std::getline(in, line) && lines < 20) {
      quoted += "\n    | " + text::terminal_safe(text::truncate_utf8(line, 300));
      ++lines;
    }
  }
  return quoted.empty() ? "\n    (it printed nothing)" : quoted;
}

}  // namespace

const std::vector<std::string>& gtest_variables_to_remove() {
  static const std::vector<std::string> names{
      "GTEST_SHARD_INDEX", "GTEST_TOTAL_SHARDS", "GTEST_SHARD_STATUS_FILE",
      "GTEST_FILTER",      "GTEST_OUTPUT",       "GTEST_REPEAT",
      "GTEST_SHUFFLE",     "GTEST_LIST_TESTS",   "GTEST_ALSO_RUN_DISABLED_TESTS",
      "GTEST_FAIL_FAST",   "GTEST_BRIEF",        "GTEST_COLOR"};
  return names;
}

Expected<DiscoveredBinary> discover_gtest_binary(
    const GtestBinary& binary, process::SignalWatch& signals,
    config::Duration timeout) {
  const std::string name = binary.executable.string();
  if (auto usable = check_executable(binary.executable); !usable)
    return usable.error();
  auto scratch = process::TemporaryDirectory::create("ranktest-list-");
  if (!scratch) return scratch.error();
  const auto json_path = scratch->path() / "listing.json";
  const auto out_path = scratch->path() / "stdout";
  const auto err_path = scratch->path() / "stderr";

  process::SpawnRequest request;
  request.argv = {binary.executable.string(), "--gtest_list_tests",
                  "--gtest_output=json:" + json_path.string()};
  request.argv.insert(request.argv.end(), binary.args.begin(),
                      binary.args.end());
  std::vector<std::pair<std::string, std::string>> env(binary.env.begin(),
                                                       binary.env.end());
  env.emplace_back("GTEST_COLOR", "no");
  request.environment =
      process::make_environment(env, gtest_variables_to_remove());
  request.working_directory = binary.working_directory;
  request.stdout_path = out_path;
  request.stderr_path = err_path;

  auto run = process::run_to_completion(request, signals, timeout);
  if (!run) return Error{fmt::format("{}: {}", name, run.error().message)};
  const auto out = text::read_file(out_path);
  const auto err = text::read_file(err_path);
  const auto fail = [&](const std::string& what) {
    return Error{fmt::format("{}: {} while listing its tests "
                             "(--gtest_list_tests); it printed:{}",
                             name, what, quote_output(out, err))};
  };
  DiscoveredBinary discovered;
  if (run->interrupted_by) {
    discovered.interrupted_by = run->interrupted_by;
    return discovered;
  }
  if (run->timed_out)
    return fail(fmt::format("hung for {}", config::format_duration(timeout)));
  if (run->exit.signaled)
    return fail(fmt::format("crashed with {}", process::describe(run->exit)));

  // Prefer the JSON listing: it carries file:line and is immune to whatever
  // else the binary prints on stdout. Older gtest writes none.
  const auto sink = gtest_test_sink(binary, discovered.tests);
  Expected<Done> listed = Error{"no listing"};
  bool complete = false;
  if (std::filesystem::exists(json_path)) {
    listed = read_listing_json(text::read_file(json_path), sink);
    complete = listed.has_value();
  }
  if (!complete) {
    discovered.tests.clear();  // what an unreadable JSON listing gave, if anything
    listed = read_listing_text(out, sink);
  }
  if (run->exit.code != 0) {
    const auto what = fmt::format("exited with code {}", run->exit.code);
    if (!complete || !listed) return fail(what);
    discovered.warnings.push_back(fmt::format(
        "{}: {} after listing its tests; they run, but each will likely "
        "fail the same way",
        name, what));
  }
  if (!listed)
    return fail(fmt::format("printed a listing ranktest cannot parse ({}); is "
                            "it a GoogleTest binary?",
                            listed.error().message));
  // A binary whose tests all vanished (a custom main that returns early on
  // unknown flags, a linking mistake) must not turn a run green.
  if (discovered.tests.empty() && !binary.allow_empty)
    return fail(
        "listed no tests; if that is expected, set allow-empty = true in its [[source]], "
        "else check that its main() passes --gtest_list_tests on to GoogleTest");
  return discovered;
}

ListingSink gtest_test_sink(const GtestBinary& binary, std::vector<TestCase>& into) {
  auto source = std::make_shared<TestSource>();
  source->kind = SuiteKind::gtest;
  source->label = binary.label;
  source->executable = binary.executable;
  source->extra_args = binary.args;
  source->env = binary.env;
  source->working_directory = binary.working_directory;
  source->launcher = binary.launcher;
  source->fork_server = binary.fork_server;
  source->fork_exit_full = binary.fork_exit_full;
  return ListingSink{
      [&into](std::size_t count) { into.reserve(into.size() + count); },
      [&into, source = std::shared_ptr<const TestSource>(std::move(source))](ListedTest&& listed) {
        TestCase test;
        test.name = listed.full_name();
        test.id = source->label + "::" + test.name;
        test.source = source;
        test.location = std::move(listed.location);
        if (!listed.type_param.empty() || !listed.value_param.empty()) {
          auto details = std::make_shared<TestDetails>();
          details->type_param = std::move(listed.type_param);
          details->value_param = std::move(listed.value_param);
          test.details = std::move(details);
        }
        if (listed.disabled()) test.skip_reason = "disabled";
        into.push_back(std::move(test));
      }};
}

Expected<std::vector<GtestBinary>> resolve_gtest_binaries(
    const config::Config& config) {
  std::vector<GtestBinary> binaries;
  for (const auto& source : config.sources) {
    if (source.kind != SuiteKind::gtest) continue;
    auto files = expand_source_paths(source.paths, config.root);
    if (!files)
      return Error{fmt::format("{}: {}", source.place.to_string(),
                               files.error().message)};
    for (const auto& file : *files) {
      GtestBinary binary;
      // Absolute: a bare name must never be looked up in PATH (another
      // program of that name would run), and a test's cwd must not change
      // which file runs.
      binary.executable = std::filesystem::absolute(file).lexically_normal();
      binary.shown_path = file;
      binary.allow_empty = source.allow_empty;
      binary.args = source.args;
      binary.env = source.env;
      binary.launcher = source.launcher;
      binary.fork_server = source.fork_server;
      binary.fork_exit_full = source.fork_exit_full;
      if (!source.working_directory.empty())
        binary.working_directory = config.root / source.working_directory;
      binaries.push_back(std::move(binary));
    }
  }
  // The same binary named by two sources runs once.
  std::set<std::filesystem::path> seen;  // by absolute path
  std::vector<GtestBinary> unique;
  for (auto& binary : binaries)
    if (seen.insert(binary.executable).second)
      unique.push_back(std::move(binary));
  std::multiset<std::string> names;
  for (const auto& binary : unique)
    names.insert(binary.executable.filename().string());
  for (auto& binary : unique) {
    const auto file_name = binary.executable.filename().string();
    binary.label =
        names.count(file_name) == 1
            ? file_name
            : binary.shown_path.lexically_relative(config.root).string();
  }
  return unique;
}

}  // namespace ranktest::discover
