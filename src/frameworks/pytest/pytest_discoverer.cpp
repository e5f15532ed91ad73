#include "frameworks/pytest/pytest_discoverer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <sys/stat.h>

#include "config/duration.h"
#include "frameworks/pytest/pytest_collection_cache.h"
#include "frameworks/pytest/python_with_pytest.h"
#include "discover/source_paths.h"
#include "frameworks/pytest/pytest_invocation.h"
#include "process/run_to_completion.h"
#include "process/temporary_directory.h"
#include "discover/quoted_output.h"
#include "discover/source_settings.h"
#include "text/file_tail.h"
#include "text/hex.h"
#include "text/sanitize.h"

namespace ranktest::discover {
namespace fs = std::filesystem;
namespace {

using Json = nlohmann::json;

// @pytest.mark.ranktest(ranks=, devices=, exclusive=, timeout=); the error
// says what is wrong with it.
Expected<DeclaredSettings> declared_settings(const Json& marker) {
  DeclaredSettings declared;
  if (!marker.is_object()) return declared;
  for (const auto& [key, value] : marker.items()) {
    if (key == "ranks") {
      if (!value.is_number_integer() || value.get<int>() < 1 || value.get<int>() > 1024)
        return Error{"ranks must be an integer from 1 to 1024"};
      declared.ranks = value.get<int>();
    } else if (key == "devices") {
      if (!value.is_object()) return Error{"devices must be a dict of counts, e.g. {\"cuda\": 2}"};
      std::map<std::string, int> devices;
      for (const auto& [kind, count] : value.items()) {
        if (!count.is_number_integer() || count.get<int>() < 0)
          return Error{fmt::format("devices[\"{}\"] must be a count", kind)};
        if (count.get<int>() > 0) devices[kind] = count.get<int>();
      }
      declared.devices = std::move(devices);
    } else if (key == "exclusive") {
      if (!value.is_boolean()) return Error{"exclusive must be True or False"};
      declared.exclusive = value.get<bool>();
    } else if (key == "timeout") {
      std::optional<config::Duration> timeout;
      if (value.is_number()) timeout = config::duration_from_seconds(value.get<double>());
      else if (value.is_string()) timeout = config::parse_duration(value.get<std::string>());
      if (!timeout || timeout->count() == 0)
        return Error{"timeout must be seconds above 0 or a duration such as \"90s\", at most "
                     "30 days"};
      declared.timeout = *timeout;
    } else if (key == "isolation") {
      if (!value.is_string() || (value != "test" && value != "worker"))
        return Error{"isolation must be \"test\" (a process of its own) or \"worker\""};
      declared.worker_isolation = value == "worker";
    } else {
      return Error{fmt::format(
          "unknown argument '{}'; known: ranks, devices, exclusive, timeout, isolation", key)};
    }
  }
  return declared;
}

}  // namespace

namespace {

// Whether no collected file is `path` or inside it. (Paths order element
// by element, so a folder's files come right after it.)
bool collects_nothing(const fs::path& path, const std::set<fs::path>& files) {
  const auto at = files.lower_bound(path);
  if (at == files.end()) return true;
  if (*at == path) return false;
  const auto prefix = path.string() + "/";
  return at->string().compare(0, prefix.size(), prefix) != 0;
}

}  // namespace

Expected<std::vector<TestCase>> parse_pytest_collection(std::string_view text,
                                                       const TestSource& like,
                                                       std::set<fs::path>* files) {
  const auto json = Json::parse(text::repair_utf8(text), nullptr, false);
  if (json.is_discarded() || !json.is_object() || !json.contains("tests") ||
      !json["tests"].is_array())
    return Error{"the plugin's collection is not the JSON ranktest expects"};
  std::vector<TestCase> tests;
  // A test run alone (plain mode: one test per pytest) gets the rootdir of
  // the collection: pytest picks its rootdir from the paths it is given, and
  // from one test file it may pick another, naming the test differently.
  const auto rootdir = json.value("rootdir", std::string());
  // One source per file, labelled by it: the tests of a file share it.
  std::map<std::string, std::shared_ptr<const TestSource>> sources;
  // The file of the test just made: its location's file, shared by its
  // neighbours (the tests of one file come together).
  std::shared_ptr<const std::string> shared_label;
  const auto base = [&](const std::string& nodeid) {
    if (files && !rootdir.empty() && nodeid != ".")
      files->insert((fs::path(rootdir) / nodeid.substr(0, nodeid.find("::"))).lexically_normal());
    TestCase test;
    test.set_id("", nodeid);
    const auto label = nodeid.substr(0, nodeid.find("::"));
    auto& source = sources[label];
    if (!source) {
      auto made = std::make_shared<TestSource>(like);
      made->label = label;
      if (!rootdir.empty()) made->extra_args.insert(made->extra_args.begin(), "--rootdir=" + rootdir);
      source = std::move(made);
    }
    test.source = source;
    if (!shared_label || *shared_label != label) shared_label = std::make_shared<const std::string>(label);
    return test;
  };
  for (const auto& entry : json["tests"]) {
    const auto nodeid = entry.value("nodeid", std::string());
    if (nodeid.empty()) continue;
    TestCase test = base(nodeid);
    // The file it was collected from (a test inherited from another
    // module's class belongs to the file that collected it).
    if (files && entry.contains("file") && entry["file"].is_string())
      files->insert(fs::path(entry["file"].get<std::string>()).lexically_normal());
    auto details = std::make_shared<TestDetails>();
    details->run_argument = entry.value("argument", nodeid);
    // A file name that is not UTF-8: the JSON names it readably ("\xc0"),
    // pytest is given its bytes.
    if (entry.contains("argument_hex") && entry["argument_hex"].is_string())
      if (auto bytes = text::from_hex(entry["argument_hex"].get<std::string>()))
        details->run_argument = *bytes;
    if (entry.contains("line") && entry["line"].is_number_integer())
      test.where = {shared_label, entry["line"].get<int>()};
    if (entry.contains("skip") && entry["skip"].is_string())
      details->skip_reason = entry["skip"].get<std::string>();
    if (entry.contains("ranktest")) {
      auto declared = declared_settings(entry["ranktest"]);
      if (declared)
        details->declared = *declared;
      else
        details->collection_error = "@pytest.mark.ranktest: " + declared.error().message;
    }
    // pytest-timeout's limit and pytest-rerunfailures' reruns, as the
    // plugin resolved them; @pytest.mark.ranktest(timeout=...) comes first.
    const auto milliseconds = [](double seconds) {
      return std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000.0 + 0.5));
    };
    if (!details->declared.timeout && entry.contains("timeout") &&
        entry["timeout"].is_number() && entry["timeout"].get<double>() > 0 &&
        entry["timeout"].get<double>() < 1e9)
      details->declared.timeout = milliseconds(entry["timeout"].get<double>());
    if (entry.contains("reruns") && entry["reruns"].is_object()) {
      const auto& reruns = entry["reruns"];
      if (reruns.contains("count") && reruns["count"].is_number_integer() &&
          reruns["count"].get<int>() > 0)
        details->declared.retries = std::min(reruns["count"].get<int>(), 100);
      if (reruns.contains("delay") && reruns["delay"].is_number() &&
          reruns["delay"].get<double>() > 0 && reruns["delay"].get<double>() < 1e6)
        details->declared.retry_delay = milliseconds(reruns["delay"].get<double>());
    }
    test.details = std::move(details);
    tests.push_back(std::move(test));
  }
  // A module pytest skipped as a whole at import is one skipped test, as
  // pytest counts it: its argument is the module, so `--exact` finds it.
  if (json.contains("skipped") && json["skipped"].is_array())
    for (const auto& skipped : json["skipped"]) {
      const auto nodeid = skipped.value("nodeid", std::string("."));
      TestCase test = base(nodeid);
      auto details = std::make_shared<TestDetails>();
      details->run_argument = nodeid;
      details->skip_reason = skipped.value("reason", std::string("skipped"));
      test.details = std::move(details);
      tests.push_back(std::move(test));
    }
  // A collection error is one failing entry however often pytest reports
  // it (with --doctest-modules, a file that fails to import fails as a
  // module and as its doctests, under one id): its messages are joined.
  std::map<std::string, std::size_t> error_at;
  if (json.contains("errors") && json["errors"].is_array())
    for (const auto& error : json["errors"]) {
      const auto nodeid = error.value("nodeid", std::string("."));
      const auto message = error.value("message", std::string("collection failed"));
      if (const auto seen = error_at.find(nodeid); seen != error_at.end()) {
        auto details = std::make_shared<TestDetails>(tests[seen->second].detail());
        if (details->collection_error != message) *details->collection_error += "\n\n" + message;
        tests[seen->second].details = std::move(details);
        continue;
      }
      TestCase test = base(nodeid);
      auto details = std::make_shared<TestDetails>();
      details->collection_error = message;
      test.details = std::move(details);
      error_at.emplace(nodeid, tests.size());
      tests.push_back(std::move(test));
    }
  return tests;
}

namespace {

// The tests, where each path gave some (or the source may be empty): a
// path that collects nothing (its tests renamed, a python_files pattern
// that misses it) would otherwise vanish from a run that still passes.
Expected<DiscoveredPytest> every_path_collected(Expected<std::vector<TestCase>> tests,
                                                const config::SourceConfig& source,
                                                const std::vector<fs::path>& paths,
                                                const std::set<fs::path>& collected_files) {
  const auto where = source.place.to_string();
  if (!tests) return Error{fmt::format("{}: {}", where, tests.error().message)};
  if (tests->empty() && !source.allow_empty)
    return Error{fmt::format("{}: pytest collected no tests from {}; if that is expected, "
                             "{}; else check its paths and pytest's "
                             "python_files/python_functions settings",
                             where, fmt::join(source.paths, ", "),
                             config::how_to_set(source.place.in_a_file(), "pytest",
                                                source.paths, "allow-empty = true"))};
  if (!source.allow_empty && paths.size() > 1)
    for (const auto& path : paths)
      if (collects_nothing(fs::absolute(path).lexically_normal(), collected_files))
        return Error{fmt::format("{}: pytest collected no tests from {}; if that is expected, "
                                 "{}; else check the path and pytest's "
                                 "python_files/python_functions settings",
                                 where, path.string(),
                                 config::how_to_set(source.place.in_a_file(), "pytest",
                                                    source.paths, "allow-empty = true"))};
  DiscoveredPytest discovered;
  discovered.tests = std::move(*tests);
  return discovered;
}

// Why pytest wrote no collection: no pytest for that interpreter, no
// interpreter at all, or what it printed.
Error collected_nothing(const config::SourceConfig& source, const process::Completion& run,
                        const std::string& output, process::SignalWatch& signals) {
  std::string hint;
  if (output.find("No module named pytest") != std::string::npos)
    hint = missing_pytest_advice(source, python3s_with_pytest(source.python, signals));
  else if (run.exit.signaled || run.exit.code == 127)
    hint = fmt::format(" (is {} a Python interpreter?)", source.python);
  return Error{fmt::format("{}: pytest collected nothing (exit code {}){}; it printed:{}",
                           source.place.to_string(),
                           run.exit.signaled ? 128 + run.exit.signal : run.exit.code, hint,
                           quote(output))};
}

}  // namespace

Expected<DiscoveredPytest> discover_pytest_source(
    const config::SourceConfig& source,
                                                  const config::Config& config,
                                                  process::SignalWatch& signals,
                                                  bool use_cache) {
  const auto where = source.place.to_string();
  const auto plugin = framework::pytest_plugin_path();
  if (!plugin)
    return Error{fmt::format("{}: cannot find ranktest's pytest plugin (ranktest_pytest); "
                             "set RANKTEST_PYTHONPATH to the folder that holds it",
                             where)};
  auto paths = expand_source_paths(source.paths, source.exclude, config.root);
  if (!paths) return Error{fmt::format("{}: {}", where, paths.error().message)};
  for (const auto& path : *paths)
    if (!fs::exists(path))
      return Error{fmt::format("{}: {}: no such file or folder; correct the path", where,
                               path.string())};
  const fs::path working_directory = fs::absolute(
      source.working_directory.empty() ? config.root : config.root / source.working_directory);
  // The cache: one file per source (by where it is collected and how),
  // holding the fingerprint it was collected at and pytest's JSON.
  std::string key = source.python + '\0' + working_directory.string();
  for (const auto& path : *paths) key += '\0' + fs::absolute(path).string();
  const auto cache_path = config.state_dir / "pytest-collections" /
                          fmt::format("{:016x}.json", fnv1a(key));
  const auto fingerprint = collection_fingerprint(source, *paths, working_directory);
  TestSource like;
  like.kind = SuiteKind::pytest;
  like.executable = source.python;
  like.table = where;
  like.extra_args = source.args;
  copy_source_settings(source, like);
  like.working_directory = working_directory;
  like.collect_arguments = source.args;
  for (const auto& path : *paths) like.collect_arguments.push_back(fs::absolute(path).string());
  std::set<fs::path> collected_files;
  const auto finish = [&](Expected<std::vector<TestCase>> tests) {
    return every_path_collected(std::move(tests), source, *paths, collected_files);
  };
  // The collection's environment, less its scratch file.
  std::vector<std::pair<std::string, std::string>> env(source.env.begin(), source.env.end());
  framework::put_plugin_on_python_path(env, *plugin);
  const auto environment = process::make_environment(env, {});
  if (use_cache)
    if (auto cached = cached_collection(cache_path, fingerprint, environment)) {
      like.outcome_stamp = fingerprint + " " + cached->inputs_stamp;
      return finish(parse_pytest_collection(cached->collection, like, &collected_files));
    }

  auto scratch = process::TemporaryDirectory::create("ranktest-collect-");
  if (!scratch) return scratch.error();
  const auto out_path = scratch->path() / "collection.json";
  const auto log_path = scratch->path() / "output";

  process::SpawnRequest request;
  request.argv = framework::pytest_base_args(source.python);
  request.argv.insert(request.argv.end(), {"--collect-only", "-q"});
  request.argv.insert(request.argv.end(), source.args.begin(), source.args.end());
  for (const auto& path : *paths) request.argv.push_back(fs::absolute(path).string());
  env.emplace_back("RANKTEST_COLLECT_OUT", out_path.string());
  request.environment = process::make_environment(env, {});
  request.working_directory = working_directory;
  request.stdout_path = log_path;
  const auto collection_started = fs::file_time_type::clock::now();

  const auto list_timeout = source.list_timeout.value_or(config.list_timeout);
  auto run = process::run_to_completion(request, signals, list_timeout);
  if (!run)
    return Error{fmt::format("{}: cannot run {}: {}; {}", where, source.python,
                             run.error().message,
                             config::how_to_set(source.place.in_a_file(), "pytest", source.paths,
                                                "python = \"/usr/bin/python3\"")) };
  DiscoveredPytest discovered;
  if (run->interrupted_by) {
    discovered.interrupted_by = run->interrupted_by;
    return discovered;
  }
  const auto output = text::read_file(log_path);
  if (run->timed_out)
    return Error{fmt::format(
        "{}: pytest still collecting {} after list-timeout = \"{}\", so it was killed; if it "
        "is only slow, {}; it printed:{}",
        where, fmt::join(source.paths, ", "), config::format_duration(list_timeout),
        source.place.in_a_file()
            ? std::string("raise list-timeout in this [[source]] (or at the top of ranktest.toml)")
            : config::how_to_set(false, "pytest", source.paths, "list-timeout = \"10m\""),
        quote(output))};
  if (!fs::exists(out_path)) return collected_nothing(source, *run, output, signals);
  const auto collection = text::read_file(out_path);
  // What the collection read, stamped: the cache's key, and with the
  // tree's fingerprint what its tests' outcomes depend on.
  const auto parsed = Json::parse(text::repair_utf8(collection), nullptr, false);
  const auto inputs =
      parsed.is_object() && parsed.contains("inputs") ? parsed["inputs"] : Json();
  fs::file_time_type newest;
  const auto inputs_stamp = collection_inputs_stamp(inputs, environment, newest);
  if (!inputs_stamp.empty()) like.outcome_stamp = fingerprint + " " + inputs_stamp;
  auto tests = parse_pytest_collection(collection, like, &collected_files);
  if (!tests) return Error{fmt::format("{}: {}", where, tests.error().message)};
  // 0: collected; 5: nothing to collect; 2: collection errors (they are
  // tests now). Anything else (4: a usage error such as a missing path)
  // means pytest did not collect what it was asked to.
  const bool errors = std::any_of(tests->begin(), tests->end(),
                                  [](const TestCase& t) { return t.detail().collection_error.has_value(); });
  const int code = run->exit.signaled ? 128 + run->exit.signal : run->exit.code;
  if (!(code == 0 || code == 5 || (code == 2 && errors)))
    return Error{fmt::format("{}: pytest failed while collecting (exit code {}); it printed:{}",
                             where, code, quote(output))};
  // Cached only when nothing changed while pytest collected (no file it
  // read is newer than the collection's start), and only by a plugin that
  // said what it read.
  if (!inputs_stamp.empty() && newest < collection_started &&
      collection_fingerprint(source, *paths, working_directory) == fingerprint)
    keep_collection(cache_path, fingerprint, inputs, inputs_stamp, collection);
  return finish(std::move(tests));
}

}  // namespace ranktest::discover
