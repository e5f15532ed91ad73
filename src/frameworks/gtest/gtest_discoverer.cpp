#include "frameworks/gtest/gtest_discoverer.h"
#include "frameworks/gtest/gtest_invocation.h"

#include <fmt/format.h>

#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>

#include "frameworks/gtest/gtest_listing.h"
#include "discover/source_paths.h"
#include "discover/source_settings.h"
#include "process/exit_status.h"
#include "process/run_to_completion.h"
#include "process/temporary_directory.h"
#include "text/file_tail.h"
#include "text/sanitize.h"

extern char** environ;

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


namespace {

// What a listing run left: how the binary ended and what it wrote.
struct ListingOutput {
  process::Completion completion;
  // How long the listing took (its run's, or the cached run's), where known.
  std::optional<std::chrono::milliseconds> took;
  // gtest's JSON listing, when it wrote one: the file and where in it it
  // starts (a cached listing follows its key). It is read as it streams by.
  struct JsonFile {
    std::filesystem::path path;
    std::streamoff from = 0;
  };
  std::optional<JsonFile> json;
  std::string out, err;
};

// The tests of a listing, or an error that names the binary and quotes
// what it printed.
Expected<DiscoveredBinary> interpret_listing(const GtestBinary& binary,
                                             const ListingOutput& listing) {
  const std::string name = binary.executable.string();
  const auto& run = listing.completion;
  const auto fail = [&](const std::string& what) {
    return Error{fmt::format("{}: {} while listing its tests "
                             "(--gtest_list_tests); it printed:{}",
                             name, what, quote_output(listing.out, listing.err))};
  };
  DiscoveredBinary discovered;
  if (run.interrupted_by) {
    discovered.interrupted_by = run.interrupted_by;
    return discovered;
  }
  if (run.timed_out)
    return Error{fmt::format(
        "{}: still listing its tests (--gtest_list_tests) after list-timeout = \"{}\", so it "
        "was killed; if it is only slow, raise list-timeout in ranktest.toml (at the top or "
        "in its [[source]]); it printed:{}",
        name, config::format_duration(binary.list_timeout),
        quote_output(listing.out, listing.err))};
  if (run.exit.signaled)
    return fail(fmt::format("crashed with {}", process::describe(run.exit)));

  // Prefer the JSON listing: it carries file:line and is immune to whatever
  // else the binary prints on stdout. Older gtest writes none.
  const auto sink = gtest_test_sink(binary, discovered.tests, listing.took);
  Expected<Done> listed = Error{"no listing"};
  bool complete = false;
  if (listing.json) {
    listed = read_listing_json_file(listing.json->path, listing.json->from, sink);
    complete = listed.has_value();
  }
  if (!complete) {
    discovered.tests.clear();  // what an unreadable JSON listing gave, if anything
    listed = read_listing_text(listing.out, sink);
  }
  if (run.exit.code != 0) {
    const auto what = fmt::format("exited with code {}", run.exit.code);
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
    return Error{fmt::format(
        "{}: listed no tests (--gtest_list_tests); if that is expected, {}; else check that "
        "its main() hands --gtest_list_tests to GoogleTest; it printed:{}",
        name,
        config::how_to_set(binary.in_a_file, "gtest", {binary.shown_path.string()},
                           "allow-empty = true"),
        quote_output(listing.out, listing.err))};
  return discovered;
}

// The listing cache: a binary is listed again only when something that can
// change its listing changed: the file (path, size, modification time,
// inode) or how it is listed (arguments, the source's environment, folder).
// One file per binary under <state-dir>/gtest-listings/: the key on its
// first line, then what the listing run wrote.
std::string cache_key(const GtestBinary& binary) {
  struct stat file {};
  if (::stat(binary.executable.c_str(), &file) != 0) return {};
  // Fields apart by NUL bytes, which no path, argument or variable holds.
  std::string key = "ranktest-listing-2";
  const auto add = [&](std::string_view field) {
    key += '\0';
    key += field;
  };
  add(binary.executable.string());
  add(std::to_string(file.st_size));
  add(fmt::format("{}.{}", file.st_mtim.tv_sec, file.st_mtim.tv_nsec));
  add(fmt::format("{}:{}", file.st_dev, file.st_ino));
  for (const auto& argument : binary.args) add(argument);
  for (const auto& [name, value] : binary.env) add(name + '=' + value);
  add(binary.working_directory.string());
  // What in the runner's environment can change which tests a binary
  // registers: the libraries it loads, and the devices it sees (a suite
  // instantiated per visible GPU).
  for (char** entry = environ; entry && *entry; ++entry) {
    const std::string_view variable(*entry);
    const auto name = variable.substr(0, variable.find('='));
    if (name == "LD_LIBRARY_PATH" || name == "LD_PRELOAD" ||
        name.ends_with("_VISIBLE_DEVICES") || name.ends_with("_VISIBLE_CHIPS"))
      add(variable);
  }
  return key;
}

std::filesystem::path cache_file(const std::filesystem::path& folder, const std::string& key) {
  std::uint64_t hash = 1469598103934665603ull;  // FNV-1a
  for (const unsigned char c : key) hash = (hash ^ c) * 1099511628211ull;
  return folder / fmt::format("{:016x}.listing", hash);
}

// The cached listing of a key: its key line, how long the listing took
// ("ms N"), then "json\n" or "text\n" and the bytes gtest wrote.
std::optional<ListingOutput> read_cached(const std::filesystem::path& file,
                                         const std::string& key) {
  std::ifstream in(file, std::ios::binary);
  std::string line;
  if (!std::getline(in, line)) return std::nullopt;
  std::string hex_key;
  for (const unsigned char c : key) hex_key += fmt::format("{:02x}", c);
  if (line != hex_key || !std::getline(in, line)) return std::nullopt;
  ListingOutput listing;
  if (line.starts_with("ms ")) {
    long long ms = 0;
    const auto [rest, error] = std::from_chars(line.data() + 3, line.data() + line.size(), ms);
    if (error != std::errc() || rest != line.data() + line.size()) return std::nullopt;
    listing.took = std::chrono::milliseconds(ms);
    if (!std::getline(in, line)) return std::nullopt;
  }
  if (line == "json") {
    listing.json = ListingOutput::JsonFile{file, in.tellg()};
  } else if (line == "text") {
    listing.out.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  } else {
    return std::nullopt;
  }
  return listing;
}

void write_cached(const std::filesystem::path& file, const std::string& key,
                  const ListingOutput& listing) {
  std::error_code error;
  std::filesystem::create_directories(file.parent_path(), error);
  if (error) return;
  const auto temporary = file.string() + fmt::format(".{}.tmp", ::getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    for (const unsigned char c : key) out << fmt::format("{:02x}", c);
    out << '\n';
    if (listing.took) out << "ms " << listing.took->count() << '\n';
    out << (listing.json ? "json\n" : "text\n");
    if (listing.json) {
      std::ifstream json(listing.json->path, std::ios::binary);
      if (json.seekg(listing.json->from)) out << json.rdbuf();
      else out.setstate(std::ios::failbit);
    } else {
      out << listing.out;
    }
    if (!out) {
      std::filesystem::remove(temporary, error);
      return;
    }
  }
  std::filesystem::rename(temporary, file, error);
}

}  // namespace

Expected<std::vector<DiscoveredBinary>> discover_gtest_binaries(
    const std::vector<GtestBinary>& binaries, process::SignalWatch& signals,
    const ListingOptions& options) {
  std::vector<std::optional<Expected<DiscoveredBinary>>> found(binaries.size());
  std::vector<std::string> keys(binaries.size());
  std::vector<std::size_t> to_list;  // indexes of the binaries to run
  for (std::size_t i = 0; i < binaries.size(); ++i) {
    if (auto usable = check_executable(binaries[i].executable); !usable) {
      found[i] = usable.error();
      continue;
    }
    if (!options.cache_folder.empty()) {
      keys[i] = cache_key(binaries[i]);
      if (!keys[i].empty())
        if (const auto cached = read_cached(cache_file(options.cache_folder, keys[i]), keys[i])) {
          auto discovered = interpret_listing(binaries[i], *cached);
          if (discovered) {
            found[i] = std::move(discovered);
            continue;
          }
        }
    }
    to_list.push_back(i);
  }

  // Every binary not cached is listed, `jobs` at once.
  std::vector<process::TemporaryDirectory> scratches;
  std::vector<process::SpawnRequest> requests;
  std::vector<std::chrono::milliseconds> timeouts;
  for (const std::size_t i : to_list) {
    const auto& binary = binaries[i];
    auto scratch = process::TemporaryDirectory::create("ranktest-list-");
    if (!scratch) return scratch.error();
    process::SpawnRequest request;
    request.argv = {binary.executable.string(), "--gtest_list_tests",
                    "--gtest_output=json:" + (scratch->path() / "listing.json").string()};
    request.argv.insert(request.argv.end(), binary.args.begin(), binary.args.end());
    std::vector<std::pair<std::string, std::string>> env(binary.env.begin(), binary.env.end());
    env.emplace_back("GTEST_COLOR", "no");
    request.environment = process::make_environment(env, framework::gtest_variables_to_remove());
    request.working_directory = binary.working_directory;
    request.stdout_path = scratch->path() / "stdout";
    request.stderr_path = scratch->path() / "stderr";
    requests.push_back(std::move(request));
    timeouts.push_back(binary.list_timeout);
    scratches.push_back(std::move(*scratch));
  }
  auto runs = process::run_all_to_completion(
      requests, options.jobs, signals, timeouts, [&](std::size_t listed) {
        if (options.progress) options.progress(listed, requests.size());
      });
  for (std::size_t r = 0; r < to_list.size(); ++r) {
    const std::size_t i = to_list[r];
    const auto& binary = binaries[i];
    if (!runs[r]) {
      found[i] = Error{fmt::format("{}: {}", binary.executable.string(), runs[r].error().message)};
      continue;
    }
    ListingOutput listing;
    listing.completion = *runs[r];
    listing.took = runs[r]->elapsed;
    const auto json_path = scratches[r].path() / "listing.json";
    if (std::filesystem::exists(json_path)) listing.json = ListingOutput::JsonFile{json_path, 0};
    listing.out = text::read_file(scratches[r].path() / "stdout");
    listing.err = text::read_file(scratches[r].path() / "stderr");
    auto discovered = interpret_listing(binary, listing);
    // Cached only when the listing was complete and clean.
    if (discovered && !discovered->interrupted_by && discovered->warnings.empty() &&
        !keys[i].empty() && cache_key(binary) == keys[i])
      write_cached(cache_file(options.cache_folder, keys[i]), keys[i], listing);
    found[i] = std::move(discovered);
  }
  std::vector<DiscoveredBinary> all;
  all.reserve(binaries.size());
  for (auto& result : found) {
    if (!*result) return result->error();
    all.push_back(std::move(**result));
  }
  return all;
}

Expected<DiscoveredBinary> discover_gtest_binary(const GtestBinary& binary,
                                                 process::SignalWatch& signals) {
  ListingOptions one_at_a_time;  // no cache, no progress
  one_at_a_time.jobs = 1;
  auto all = discover_gtest_binaries({binary}, signals, one_at_a_time);
  if (!all) return all.error();
  return std::move(all->front());
}

ListingSink gtest_test_sink(const GtestBinary& binary, std::vector<TestCase>& into,
                            std::optional<std::chrono::milliseconds> start_up) {
  auto source = std::make_shared<TestSource>();
  source->kind = SuiteKind::gtest;
  source->label = binary.label;
  source->executable = binary.executable;
  source->extra_args = binary.args;
  source->working_directory = binary.working_directory;
  copy_source_settings(binary, *source);
  // Its mode, where its source names none: by what starting it costs.
  source->start_up = start_up;
  if (!binary.mode_given) source->fork_server = start_up && *start_up >= kForkServerStartUp;
  // The binary as built: its size and modification time.
  if (struct stat info{}; ::stat(binary.executable.c_str(), &info) == 0)
    source->outcome_stamp = fmt::format("{} {}.{}", info.st_size, info.st_mtim.tv_sec,
                                        info.st_mtim.tv_nsec);
  return ListingSink{
      [&into](std::size_t count) { into.reserve(into.size() + count); },
      [&into, source = std::shared_ptr<const TestSource>(std::move(source)),
       prefix = binary.label + "::",
       files = std::make_shared<FileNames>()](ListedTest&& listed) {
        TestCase test;
        test.set_id(prefix, listed.full_name());
        test.source = source;
        if (listed.location)
          test.where = {files->shared(std::move(listed.location->file)), listed.location->line};
        if (!listed.type_param.empty() || !listed.value_param.empty() || listed.disabled()) {
          auto details = std::make_shared<TestDetails>();
          details->type_param = std::move(listed.type_param);
          details->value_param = std::move(listed.value_param);
          if (listed.disabled()) details->skip_reason = "disabled";
          test.details = std::move(details);
        }
        into.push_back(std::move(test));
      }};
}

Expected<std::vector<GtestBinary>> resolve_gtest_binaries(
    const config::Config& config) {
  std::vector<const config::SourceConfig*> sources;
  for (const auto& source : config.sources)
    if (source.kind == SuiteKind::gtest) sources.push_back(&source);
  return resolve_gtest_binaries(sources, config);
}

Expected<std::vector<GtestBinary>> resolve_gtest_binaries(
    const std::vector<const config::SourceConfig*>& sources, const config::Config& config) {
  std::vector<GtestBinary> binaries;
  for (const auto* each : sources) {
    const auto& source = *each;
    auto files = expand_source_paths(source.paths, source.exclude, config.root);
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
      binary.mode_given = source.mode_given;
      binary.in_a_file = source.place.in_a_file();
      binary.args = source.args;
      copy_source_settings(source, binary);
      binary.list_timeout = source.list_timeout.value_or(config.list_timeout);
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
