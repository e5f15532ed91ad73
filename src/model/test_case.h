// What discovery knows about one test: enough to select, schedule, run and
// report it. Immutable once discovered.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
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

struct TestCase {
  // Unique within a run: "<source label>::<framework name>".
  std::string id;
  // The name the framework knows it by, e.g. "Suite/0.Name/3" for gtest.
  std::string name;
  // Never null once discovered.
  std::shared_ptr<const TestSource> source;
  std::optional<SourceLocation> location;
  // Set when the test is collected but must not run, e.g. "disabled".
  std::optional<std::string> skip_reason;
  // Null when the test has no details.
  std::shared_ptr<const TestDetails> details;

  // Its details, or empty ones.
  const TestDetails& detail() const {
    static const TestDetails none;
    return details ? *details : none;
  }
};

}  // namespace ranktest
