#include "frameworks/ctest/ctest_discoverer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "config/duration.h"
#include "process/run_to_completion.h"
#include "process/temporary_directory.h"
#include "discover/quoted_output.h"
#include "discover/source_settings.h"
#include "select/test_order.h"
#include "text/file_tail.h"
#include "text/sanitize.h"

namespace ranktest::discover {

namespace fs = std::filesystem;
namespace {

using Json = nlohmann::json;

// Properties that only describe the test, or that ranktest does itself
// better (its own cgroup and timeouts): nothing to say about them.
const std::set<std::string>& quietly_ignored() {
  static const std::set<std::string> names{"COST", "ATTACHED_FILES", "ATTACHED_FILES_ON_FAIL",
                                           "MEASUREMENT", "PROCESSOR_AFFINITY",
                                           "_BACKTRACE_TRIPLES"};
  return names;
}

// A property value that is a list in CMake may come as one string.
std::vector<std::string> string_list(const Json& value) {
  std::vector<std::string> list;
  if (value.is_array()) {
    for (const auto& item : value)
      if (item.is_string()) list.push_back(item.get<std::string>());
  } else if (value.is_string()) {
    list.push_back(value.get<std::string>());
  }
  return list;
}

bool truthy(const Json& value) {
  if (value.is_boolean()) return value.get<bool>();
  if (value.is_number()) return value.get<double>() != 0;
  if (value.is_string()) {
    const auto text = value.get<std::string>();
    return !(text.empty() || text == "0" || text == "OFF" || text == "FALSE" || text == "NO" ||
             text == "N" || text == "IGNORE" || text == "NOTFOUND" || text.ends_with("-NOTFOUND"));
  }
  return false;
}

std::optional<double> number(const Json& value) {
  if (value.is_number()) return value.get<double>();
  if (value.is_string()) {
    try {
      return std::stod(value.get<std::string>());
    } catch (...) {
    }
  }
  return std::nullopt;
}

// RESOURCE_GROUPS as the listing gives it: [{"requirements": [{".type":
// "gpus", "slots": 1}]}, ...], a group per entry (counts already expanded).
ResourceGroups resource_groups(const Json& value) {
  ResourceGroups groups;
  if (!value.is_array()) return groups;
  for (const auto& group : value) {
    std::vector<ResourceRequirement> needs;
    if (group.is_object() && group.contains("requirements") && group["requirements"].is_array())
      for (const auto& requirement : group["requirements"]) {
        if (!requirement.is_object() || !requirement.contains(".type") ||
            !requirement[".type"].is_string())
          continue;
        const auto slots = number(requirement.value("slots", Json(1)));
        needs.push_back(ResourceRequirement{requirement[".type"].get<std::string>(),
                                            slots && *slots >= 1 ? static_cast<int>(*slots) : 1});
      }
    if (!needs.empty()) groups.push_back(std::move(needs));
  }
  return groups;
}

// Where add_test was called, from the listing's backtrace graph.
std::optional<SourceLocation> location_of(const Json& test, const Json& graph) {
  if (!test.contains("backtrace") || !test["backtrace"].is_number_unsigned()) return std::nullopt;
  const auto index = test["backtrace"].get<std::size_t>();
  const auto& nodes = graph.value("nodes", Json::array());
  const auto& files = graph.value("files", Json::array());
  if (index >= nodes.size()) return std::nullopt;
  const auto& node = nodes[index];
  const auto file = node.value("file", std::size_t{0});
  if (file >= files.size() || !files[file].is_string()) return std::nullopt;
  return SourceLocation{files[file].get<std::string>(), node.value("line", 0)};
}

// "a -> b -> a" where the tests wait for one another in a circle.
std::optional<std::string> waiting_circle(const std::vector<TestCase>& tests) {
  std::vector<const TestCase*> pointers;
  for (const auto& test : tests) pointers.push_back(&test);
  const auto cycle = select::find_cycle(select::prerequisites_among(pointers));
  if (!cycle) return std::nullopt;
  std::string text;
  for (const auto index : *cycle) text.append(tests[index].name()).append(" waits for ");
  return text.append(tests[cycle->front()].name());
}

}  // namespace

Expected<DiscoveredCtest> parse_ctest_listing(std::string_view json, const std::string& label,
                                              const config::SourceConfig& source) {
  const auto listing = Json::parse(json, nullptr, false);
  if (listing.is_discarded() || !listing.is_object() || !listing.contains("tests") ||
      !listing["tests"].is_array())
    return Error{"ctest's --show-only=json-v1 listing is not the JSON ranktest reads "
                 "(an object with \"tests\"); is this CMake 3.14 or later?"};
  const Json graph = listing.value("backtraceGraph", Json::object());
  DiscoveredCtest discovered;
  // Property -> the tests that have it, for one warning each.
  std::map<std::string, std::vector<std::string>> unhonoured;
  for (const auto& entry : listing["tests"]) {
    if (!entry.is_object() || !entry.contains("name") || !entry["name"].is_string())
      return Error{"ctest's listing has a test without a name"};
    TestCase test;
    test.set_id(label + "::", entry["name"].get<std::string>());
    test.set_location(location_of(entry, graph));
    auto test_source = std::make_shared<TestSource>();
    test_source->kind = SuiteKind::ctest;
    test_source->label = label;
    copy_source_settings(source, *test_source);
    // CTest says how each test runs: never a fork server.
    test_source->fork_server = false;
    auto details = std::make_shared<TestDetails>();
    std::vector<std::string> refusals;
    const auto command = string_list(entry.value("command", Json::array()));
    if (command.empty()) {
      refusals.push_back("CTest has no command for it (is its executable built?)");
    } else {
      test_source->executable = command.front();
      test_source->extra_args.assign(command.begin() + 1, command.end());
    }
    for (const auto& property : entry.value("properties", Json::array())) {
      const auto name = property.value("name", std::string());
      const Json value = property.contains("value") ? property["value"] : Json();
      if (name == "WORKING_DIRECTORY" && value.is_string()) {
        test_source->working_directory = value.get<std::string>();
      } else if (name == "ENVIRONMENT") {
        for (const auto& assignment : string_list(value)) {
          const auto equals = assignment.find('=');
          if (equals == std::string::npos || equals == 0) continue;
          test_source->env[assignment.substr(0, equals)] = assignment.substr(equals + 1);
        }
      } else if (name == "TIMEOUT") {
        // CTest's 0 means no limit of the test's own: ranktest's timeout holds.
        // One longer than ranktest's longest (ctest's JSON writes 1e18 or
        // 1e300 for "never") is that longest: 30 days, not an overflow.
        if (const auto seconds = number(value); seconds && *seconds > 0)
          details->declared.timeout =
              config::duration_from_seconds(*seconds).value_or(config::kLongestDuration);
      } else if (name == "RUN_SERIAL") {
        details->declared.exclusive = truthy(value);
      } else if (name == "PROCESSORS") {
        if (const auto count = number(value); count && *count >= 1)
          details->declared.slots = static_cast<int>(*count);
      } else if (name == "LABELS") {
        details->declared.labels = string_list(value);
      } else if (name == "WILL_FAIL") {
        details->exit_rules.will_fail = truthy(value);
      } else if (name == "SKIP_RETURN_CODE") {
        if (const auto code = number(value); code && *code >= 0 && *code <= 255)
          details->exit_rules.skip_return_code = static_cast<int>(*code);
      } else if (name == "SKIP_REGULAR_EXPRESSION") {
        for (const auto& pattern : string_list(value)) {
          try {
            (void)std::regex(pattern);
            details->exit_rules.skip_patterns.push_back(pattern);
          } catch (const std::regex_error&) {
            refusals.push_back(fmt::format(
                "its SKIP_REGULAR_EXPRESSION \"{}\" is not a regular expression ranktest reads",
                pattern));
          }
        }
      } else if (name == "RESOURCE_GROUPS") {
        details->resource_groups = resource_groups(value);
      } else if (name == "DEPENDS") {
        details->depends = string_list(value);
      } else if (name == "FIXTURES_SETUP") {
        details->fixtures_setup = string_list(value);
      } else if (name == "FIXTURES_CLEANUP") {
        details->fixtures_cleanup = string_list(value);
      } else if (name == "FIXTURES_REQUIRED") {
        details->fixtures_required = string_list(value);
      } else if (name == "RESOURCE_LOCK") {
        details->resource_locks = string_list(value);
      } else if (name == "DISABLED") {
        if (truthy(value)) details->skip_reason = "disabled (CTest property DISABLED)";
      } else if (name == "PASS_REGULAR_EXPRESSION" || name == "FAIL_REGULAR_EXPRESSION") {
        // Ignoring either could turn a failing test green: refused instead.
        refusals.push_back(fmt::format(
            "ranktest does not implement CTest's {}, which decides this test's verdict; run it "
            "with ctest, or judge it by exit code and remove the property",
            name));
      } else if (!quietly_ignored().contains(name)) {
        unhonoured[name].emplace_back(test.name());
      }
    }
    if (!refusals.empty())
      details->collection_error = fmt::format("{}", fmt::join(refusals, "; "));
    test.source = std::move(test_source);
    test.details = std::move(details);
    discovered.tests.push_back(std::move(test));
  }
  for (const auto& [name, tests] : unhonoured)
    discovered.warnings.push_back(fmt::format(
        "{}: CTest property {} is not honoured by ranktest ({} test{}, e.g. {}); {}", label, name,
        tests.size(), tests.size() == 1 ? "" : "s", tests.front(), "the tests run without it"));
  return discovered;
}

Expected<DiscoveredCtest> discover_ctest_source(const config::SourceConfig& source,
                                                const config::Config& config,
                                                process::SignalWatch& signals) {
  const auto where = source.place.to_string();
  DiscoveredCtest all;
  for (const auto& path : source.paths) {
    fs::path folder = fs::absolute(config.root / path).lexically_normal();
    // "build/" and "." name the folder too: its label is never empty.
    if (folder.filename().empty()) folder = folder.parent_path();
    std::error_code error;
    if (!fs::is_regular_file(folder / "CTestTestfile.cmake", error))
      return Error{fmt::format(
          "{}: {} is not a CTest build folder (no CTestTestfile.cmake in it); name the folder "
          "CMake built into, after enable_testing() and a build",
          where, folder.string())};
    auto scratch = process::TemporaryDirectory::create("ranktest-ctest-");
    if (!scratch) return scratch.error();
    const auto out_path = scratch->path() / "listing.json";
    const auto err_path = scratch->path() / "stderr";
    process::SpawnRequest request;
    request.argv = {"ctest", "--show-only=json-v1"};
    std::vector<std::pair<std::string, std::string>> env(source.env.begin(), source.env.end());
    request.environment = process::make_environment(env, {});
    request.working_directory = folder;
    request.stdout_path = out_path;
    request.stderr_path = err_path;
    const auto list_timeout = source.list_timeout.value_or(config.list_timeout);
    auto run = process::run_to_completion(request, signals, list_timeout);
    if (!run)
      return Error{fmt::format("{}: cannot run ctest in {}: {}; install CMake (apt-get install "
                               "cmake) or put ctest in PATH",
                               where, folder.string(), run.error().message)};
    if (run->interrupted_by) {
      all.interrupted_by = run->interrupted_by;
      return all;
    }
    const auto said = text::read_file(err_path);
    if (run->timed_out)
      return Error{fmt::format(
          "{}: ctest --show-only in {} still running after list-timeout = \"{}\", so it was "
          "killed; raise list-timeout in this [[source]]; it printed:{}",
          where, folder.string(), config::format_duration(list_timeout), quote(said))};
    if (run->exit.signaled || run->exit.code != 0)
      return Error{fmt::format("{}: ctest --show-only=json-v1 failed in {} (exit code {}); it "
                               "printed:{}",
                               where, folder.string(),
                               run->exit.signaled ? 128 + run->exit.signal : run->exit.code,
                               quote(said))};
    const auto label = folder.filename().string();
    auto parsed = parse_ctest_listing(text::read_file(out_path), label, source);
    if (!parsed) return Error{fmt::format("{}: {}: {}", where, folder.string(), parsed.error().message)};
    if (auto cycle = waiting_circle(parsed->tests))
      return Error{fmt::format("{}: CTest tests in {} wait for one another in a circle ({}), "
                               "through their DEPENDS and FIXTURES_* properties; ctest refuses "
                               "them too: break the circle in the project's CMake files",
                               where, folder.string(), *cycle)};
    if (parsed->tests.empty() && !source.allow_empty)
      return Error{fmt::format("{}: CTest knows no test in {}; if that is expected, {}; else "
                               "build the project (gtest_discover_tests lists tests at build "
                               "time)",
                               where, folder.string(),
                               config::how_to_set(source.place.in_a_file(), "ctest",
                                                  source.paths, "allow-empty = true"))};
    std::move(parsed->tests.begin(), parsed->tests.end(), std::back_inserter(all.tests));
    std::move(parsed->warnings.begin(), parsed->warnings.end(), std::back_inserter(all.warnings));
  }
  return all;
}

}  // namespace ranktest::discover
