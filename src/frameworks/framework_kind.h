// A test framework, as the rest of ranktest sees it: one room per framework
// (frameworks/gtest/, frameworks/pytest/, frameworks/ctest/), each holding
// its discovery, invocation, adapter and result reading, and one object of
// this interface that the registry (frameworks/registry.cpp) lists. The
// configuration, the plan, the scheduler, the runner and the reports ask
// the framework of a source here instead of branching on its kind.
//
// Adding a framework: a folder beside the three, a SuiteKind value
// (model/test_case.h), one line in registry.cpp, and docs/adapters.md.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/config.h"
#include "model/expected.h"
#include "model/test_case.h"

namespace ranktest::process {
class SignalWatch;
}
namespace ranktest::execute {
class FrameworkAdapter;
}

namespace ranktest::frameworks {

// What a [[source]] of the framework takes (config/source_table.cpp).
struct SourceRules {
  // Keys a source of this framework refuses rather than ignores, each with
  // what the error says after "key 'KEY' in [[source]] ".
  std::vector<std::pair<std::string_view, std::string_view>> refused_keys;
  // mode = "fork-server" unless the source says otherwise.
  bool fork_server_by_default = false;
  // The error for a source without 'paths'.
  std::string_view missing_paths;
};

// How tests of the framework run one after another in one process
// (isolation = "worker").
enum class WorkerStyle {
  none,                // a process per test, always
  forked_from_server,  // a child of the source's fork server runs test after test
  collecting,          // a fresh process that collected the source runs test after test
  own_loop,            // the framework's own loop runs a share of the tests
};

// What one framework's discovery found, over all its sources.
struct Discovered {
  std::vector<TestCase> tests;
  std::vector<std::string> warnings;  // things to say that do not stop the run
  // Set when SIGINT/SIGTERM/SIGHUP came while listing: `interrupted_while`
  // says what was being listed, and the run stops.
  std::optional<int> interrupted_by;
  std::string interrupted_while;
};

// What discovery is given beside the sources.
struct DiscoveryContext {
  const config::Config& config;
  process::SignalWatch& signals;
  bool recollect = false;  // --recollect: no listing or collection from the cache
  // Told (listed, to list) while listing takes long (app/listing_progress.h).
  std::function<void(std::size_t, std::size_t)> progress;
};

// A source found where no ranktest.toml names one, and what was found, for
// the run's first line ("a pytest project (pytest.ini; collecting tests)").
struct ImpliedSource {
  config::SourceConfig source;
  std::string found;
};

// The names a framework's own JUnit file gives a test, so that a CI's test
// history carries over from it.
struct JunitName {
  std::string classname;
  std::string name;
};

class FrameworkKind {
 public:
  virtual ~FrameworkKind() = default;

  virtual SuiteKind id() const = 0;
  // As `kind = "..."` names it in [[source]], and events' "kind".
  virtual std::string_view name() const = 0;

  virtual SourceRules source_rules() const = 0;

  // With no ranktest.toml (config/implicit_sources.cpp): the source of this
  // framework that `folder` holds, as the framework run there with no
  // configuration would find it; nullopt: none.
  virtual std::optional<ImpliedSource> implied_by_folder(
      const std::filesystem::path& /*folder*/) const {
    return std::nullopt;
  }
  // The source `path` named on the command line is, if it is this
  // framework's (nullopt: it is not; an error: it is, but cannot be run).
  // Relative paths stay relative to the working folder. Sources of one
  // framework with the same place are merged into one.
  virtual std::optional<Expected<config::SourceConfig>> source_of_path(
      const std::string& /*path*/) const {
    return std::nullopt;
  }
  // What a path on the command line of this framework is ("a test
  // binary"), and what marks a folder as holding its tests ("a CMake build
  // folder: CTestTestfile.cmake"; empty: none does), for the errors that say
  // what ranktest looked for.
  virtual std::string_view command_line_path() const = 0;
  virtual std::string_view folder_marks() const { return {}; }

  // Arguments added to each source's for the command line's -m and -k.
  virtual std::vector<std::string> selection_arguments(
      const std::optional<std::string>& /*markers*/,
      const std::optional<std::string>& /*keyword*/) const {
    return {};
  }

  // The tests of `sources` (each of this framework), in their order.
  virtual Expected<Discovered> discover(const std::vector<const config::SourceConfig*>& sources,
                                        DiscoveryContext& context) const = 0;

  virtual WorkerStyle worker_style(const TestSource& /*source*/) const { return WorkerStyle::none; }
  // isolation = "worker" where neither the test nor its source says.
  virtual bool worker_isolation_by_default() const { return false; }

  // Whether a test's collection error (TestDetails::collection_error)
  // means ranktest refuses to run it (it cannot judge it as the framework
  // would) rather than that the framework could not collect it.
  virtual bool collection_error_is_refusal() const { return false; }

  // How the framework's own JUnit file names the test called `name` (its
  // id less the source) from `source` (the source's label).
  virtual JunitName junit_name(const std::string& name, const std::string& source) const = 0;

  // Starting a test and reading what it did.
  virtual const execute::FrameworkAdapter& adapter() const = 0;
};

const FrameworkKind& framework_of(SuiteKind kind);
// nullptr: no framework of that name.
const FrameworkKind* framework_named(std::string_view name);
// Every framework, in the order discovery lists their tests. A path on the
// command line is offered to them from the last to the first: the most
// particular first, gtest (any file) last.
const std::vector<const FrameworkKind*>& all_frameworks();
// "gtest, pytest, ctest": for messages naming the choices.
std::string framework_names(std::string_view separator = ", ");

}  // namespace ranktest::frameworks
