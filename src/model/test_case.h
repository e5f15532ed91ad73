// What discovery knows about one test: enough to select, schedule, run and
// report it. Immutable once discovered.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ranktest {

// Which framework a test is of: one value per room in src/frameworks/, whose
// FrameworkKind (frameworks/framework_kind.h) gives its name and rules;
// the list is model/framework_list.h.
enum class SuiteKind : unsigned char {
#define RANKTEST_FRAMEWORK(name) name,
#include "model/framework_list.h"
#undef RANKTEST_FRAMEWORK
};

// What starts a test's ranks (docs/launchers.md): ranktest itself, on
// this machine, or one of model/launcher_list.h (OpenMPI's mpirun, a
// Slurm job step).
enum class Launcher : unsigned char {
  local,
#define RANKTEST_LAUNCHER(name) name,
#include "model/launcher_list.h"
#undef RANKTEST_LAUNCHER
};

// The network a test's ranks see: the machine's own, or a namespace of the
// test's own with only a loopback interface (network = "isolated").
enum class Network : unsigned char { host, isolated };

struct SourceLocation {
  std::string file;
  int line = 0;
};

// What a test says about how it must run, in its own source (pytest's
// @pytest.mark.ranktest); [[override]] entries still win over it.
struct DeclaredSettings {
  std::optional<int> ranks;
  std::optional<std::map<std::string, int>> devices;
  std::optional<bool> exclusive;
  std::optional<std::chrono::milliseconds> timeout;
  // CPU slots the test takes though it runs one process (CTest's
  // PROCESSORS); the scheduler gives it the larger of this and its ranks.
  std::optional<int> slots;
  std::optional<std::vector<std::string>> labels;  // CTest's LABELS
  // pytest-rerunfailures' reruns (its flaky mark), as ranktest's retries.
  std::optional<int> retries;
  std::optional<std::chrono::milliseconds> retry_delay;
  // @pytest.mark.ranktest(isolation="test"): true for "worker".
  std::optional<bool> worker_isolation;
};

// How a CTest test's exit is judged (CTest's own properties): exit code 0
// passes, unless will_fail turns that around; skip_return_code, or output
// matching one of skip_patterns, makes it skipped.
struct ExitRules {
  bool will_fail = false;
  std::optional<int> skip_return_code;
  std::vector<std::string> skip_patterns;  // ECMAScript regular expressions
};

// CTest's RESOURCE_GROUPS as ctest's listing expands them ("2,gpus:1"
// becomes two groups): each group needs, of each resource type, one
// resource with this many slots.
struct ResourceRequirement {
  std::string type;  // as the project names it: "gpus"
  int slots = 1;
  bool operator==(const ResourceRequirement&) const = default;
};
using ResourceGroups = std::vector<std::vector<ResourceRequirement>>;

// How to start the tests of one source (a gtest binary, a pytest source):
// the same for each of its tests, so they share one (a binary may hold
// 100,000 tests, and a copy per test of its path, arguments and
// environment is most of a test's memory). Immutable once discovered.
struct TestSource {
  SuiteKind kind = SuiteKind::gtest;
  // Names the source (e.g. the binary's file name); JUnit's testsuite name.
  std::string label;
  std::filesystem::path executable;
  std::vector<std::string> extra_args;
  std::map<std::string, std::string> env;
  std::filesystem::path working_directory;  // empty: the runner's own
  // pytest: the arguments the source was collected with (its args and
  // paths), which a fork server collects again.
  std::vector<std::string> collect_arguments;
  // Whether its tests run through a fork server.
  bool fork_server = false;
  // gtest fork server: end each forked test with the ordinary exit, the
  // server's teardown included (fork-exit = "full"), or without it
  // ("fast", the default: a test that does not pass still exits fully).
  bool fork_exit_full = false;
  // The source's launcher, where it names one; [[override]] entries win.
  std::optional<Launcher> launcher;
  // The source's network and tmpdir, where it names them; [[override]]
  // entries win.
  std::optional<Network> network;
  std::optional<bool> private_tmpdir;
  std::optional<bool> worker_isolation;  // pytest sources: isolation = "worker"
  // pytest, mode = "collecting-workers": a worker is a fresh pytest that
  // collected the source itself (config::SourceConfig).
  bool collecting_workers = false;
  // gtest: how long listing the binary took (its start-up: exec, dynamic
  // linking, static initialisation), which chose its mode where its source
  // names none; unknown: nullopt.
  std::optional<std::chrono::milliseconds> start_up;
  // Its [[source]] table's place (file:line:column) where the sources of
  // one table are several (a pytest source's files): tells two tables that
  // collect the same test from one table that lists it twice.
  std::string table;
  // Changes whenever what its tests' outcomes depend on beyond the run's
  // settings changes: a gtest binary's file; a pytest source's files, its
  // conftest chain and what its collection read (the modules, files and
  // variables the collection cache follows). Empty: unknown. A failure the
  // history remembers is trusted only under the same stamp.
  std::string outcome_stamp;
};

// What only some tests have: parameters (gtest), pytest's own fields, a
// collection error. Apart from TestCase so that a test without any of it
// costs a null pointer.
struct TestDetails {
  std::string type_param;   // gtest typed tests: "int"
  std::string value_param;  // gtest value-parameterised tests: "\"a/b\""
  // pytest: what to pass pytest to run this test alone ("/abs/test_x.py::t").
  std::string run_argument;
  // Set when the test is collected but must not run, e.g. "disabled".
  std::optional<std::string> skip_reason;
  // Set when collecting this test's file failed: it is reported as an error
  // with this message, never silently lost.
  std::optional<std::string> collection_error;
  DeclaredSettings declared;
  ExitRules exit_rules;  // ctest tests only
  ResourceGroups resource_groups;  // ctest tests only
  // ctest tests only: what orders this test among the others of its build
  // folder. DEPENDS names tests that finish before it starts; fixtures are
  // CTest's FIXTURES_SETUP / _CLEANUP / _REQUIRED (a setup runs before, and
  // must pass for, every test that requires its fixture; a cleanup runs
  // after them all); RESOURCE_LOCK names what no two tests hold at once.
  std::vector<std::string> depends;
  std::vector<std::string> fixtures_setup;
  std::vector<std::string> fixtures_cleanup;
  std::vector<std::string> fixtures_required;
  std::vector<std::string> resource_locks;
};

// A test's place in the code, as a TestCase keeps it: the file a string
// shared by the tests of one file (a binary's 100,000 tests are in a few
// files; a copy each was a third of a test's memory).
struct SharedLocation {
  std::shared_ptr<const std::string> file;
  int line = 0;
};

// Hands out one shared string per file name: consecutive tests are mostly
// of one file, so the last one is kept at hand.
class FileNames {
 public:
  std::shared_ptr<const std::string> shared(std::string file) {
    if (last_ && *last_ == file) return last_;
    auto& known = known_[file];
    if (!known) known = std::make_shared<const std::string>(std::move(file));
    return last_ = known;
  }

 private:
  std::map<std::string, std::shared_ptr<const std::string>, std::less<>> known_;
  std::shared_ptr<const std::string> last_;
};

// One discovered test. Kept small (a suite may hold 1,000,000 of them):
// the name is a view of the id, the file is shared, and what only some
// tests have (parameters, a skip reason, a framework's own fields) is in
// TestDetails.
struct TestCase {
  // Unique within a run: "<source label>::<framework name>".
  std::string id;
  // Never null once discovered.
  std::shared_ptr<const TestSource> source;
  // Null when the test has no details.
  std::shared_ptr<const TestDetails> details;
  SharedLocation where;
  // Where in `id` the name begins.
  std::uint32_t name_from = 0;

  // The id is `prefix` + `name` (the prefix "<label>::", or empty where
  // the framework's own name is the id, as a pytest node id is).
  void set_id(std::string_view prefix, std::string_view name) {
    id.reserve(prefix.size() + name.size());
    id.assign(prefix).append(name);
    name_from = static_cast<std::uint32_t>(prefix.size());
  }
  // The name the framework knows it by, e.g. "Suite/0.Name/3" for gtest.
  std::string_view name() const { return std::string_view(id).substr(name_from); }

  std::optional<SourceLocation> location() const {
    if (!where.file) return std::nullopt;
    return SourceLocation{*where.file, where.line};
  }
  void set_location(const std::optional<SourceLocation>& location) {
    where = location ? SharedLocation{std::make_shared<const std::string>(location->file),
                                      location->line}
                     : SharedLocation{};
  }

  // Set when the test is collected but must not run, e.g. "disabled".
  const std::optional<std::string>& skip_reason() const { return detail().skip_reason; }

  // Its details, or empty ones.
  const TestDetails& detail() const {
    static const TestDetails none;
    return details ? *details : none;
  }
};

}  // namespace ranktest
