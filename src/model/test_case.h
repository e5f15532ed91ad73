// What discovery knows about one test: enough to select, schedule, run and
// report it. Immutable once discovered.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ranktest {

enum class SuiteKind { gtest, pytest };

// What starts a test's ranks (DESIGN.md, Launchers): ranktest itself, on
// this machine; OpenMPI's mpirun; or a Slurm job step (srun).
enum class Launcher : unsigned char { local, mpirun, slurm };

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
};

struct TestCase {
  // Unique within a run: "<source label>::<framework name>".
  std::string id;
  // The name the framework knows it by, e.g. "Suite/0.Name/3" for gtest.
  std::string name;
  SuiteKind kind = SuiteKind::gtest;
  // Names the source (e.g. the binary's file name); JUnit's testsuite name.
  std::string source_label;
  std::filesystem::path executable;
  std::vector<std::string> extra_args;
  std::map<std::string, std::string> env;
  std::filesystem::path working_directory;  // empty: the runner's own
  std::optional<SourceLocation> location;
  std::string type_param;   // gtest typed tests: "int"
  std::string value_param;  // gtest value-parameterised tests: "\"a/b\""
  // Set when the test is collected but must not run, e.g. "disabled".
  std::optional<std::string> skip_reason;
  // pytest: what to pass pytest to run this test alone ("/abs/test_x.py::t").
  std::string run_argument;
  // Set when collecting this test's file failed: it is reported as an error
  // with this message, never silently lost.
  std::optional<std::string> collection_error;
  DeclaredSettings declared;
  // pytest: the arguments the source was collected with (its args and
  // paths), which a fork server collects again; and whether its tests run
  // through one.
  std::vector<std::string> collect_arguments;
  bool fork_server = false;
  // The source's launcher, where it names one; [[override]] entries win.
  std::optional<Launcher> launcher;
};

}  // namespace ranktest
