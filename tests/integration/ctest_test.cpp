// A CMake project's CTest tests (examples/ctest, built by the main build
// into build/examples/ctest) end the same under ranktest's kind = "ctest"
// source as under ctest itself.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <regex>
#include <sstream>

#include "harness.h"

namespace ranktest::testing {
namespace {

const std::string kBuild = EXAMPLES_BINARY_DIR "/ctest";

std::string config_for(const std::string& folder) {
  return "timeout = \"30s\"\ngrace-period = \"1s\"\n[[source]]\nkind = \"ctest\"\npaths = [\"" +
         folder + "\"]\n";
}

// ctest's own verdicts, from its progress lines
// ("  9/12 Test  #9: tool.hangs ....***Timeout   1.01 sec"), in ranktest's words.
std::map<std::string, std::string> ctest_outcomes(const std::string& output) {
  static const std::regex line(R"(Test +#\d+: (\S+) \.*\s*(.*?)\s+[0-9.]+ sec)");
  std::map<std::string, std::string> outcomes;
  std::istringstream in(output);
  for (std::string text; std::getline(in, text);) {
    std::smatch match;
    if (!std::regex_search(text, match, line)) continue;
    const std::string status = match[2];
    std::string outcome = "unknown: " + status;
    if (status.find("Exception") != std::string::npos) outcome = "crashed";
    else if (status.find("Timeout") != std::string::npos) outcome = "timed-out";
    else if (status.find("Skipped") != std::string::npos) outcome = "skipped";
    else if (status.find("Not Run") != std::string::npos) outcome = "not-run";
    else if (status.find("Failed") != std::string::npos) outcome = "failed";
    else if (status.find("Passed") != std::string::npos) outcome = "passed";
    outcomes[match[1]] = outcome;
  }
  return outcomes;
}

// CTest's resource spec for the example: two GPUs.
const std::string kResourceSpec = RANKTEST_SOURCE_DIR "/examples/ctest/resources.json";
const std::string kTwoGpus = "[devices]\ngpus = [\"0\", \"1\"]\n";

TEST(Ctest, OutcomesEqualCtests) {
  std::string output;
  shell("cd '" + kBuild + "' && ctest --resource-spec-file '" + kResourceSpec + "' 2>&1",
        &output);
  const auto expected = ctest_outcomes(output);
  ASSERT_EQ(expected.size(), 16u) << output;

  Workdir dir;
  dir.write("ranktest.toml", config_for(kBuild) + kTwoGpus);
  const auto run = run_ranktest(dir, {"run"});
  EXPECT_EQ(run.exit_code, 1) << run.err;
  std::map<std::string, std::string> got;
  for (const auto& [id, event] : run.finished())
    got[id.substr(id.find("::") + 2)] = event["result"]["outcome"].get<std::string>();
  EXPECT_EQ(got, expected) << run.out << run.err;

  // What each case stands for, so that both agreeing on a wrong verdict fails too.
  EXPECT_EQ(got["gtest.Arithmetic.Adds"], "passed");
  EXPECT_EQ(got["gtest.Arithmetic.SubtractsWrongly"], "failed");
  EXPECT_EQ(got["gtest.Arithmetic.Skips"], "skipped");  // SKIP_REGULAR_EXPRESSION
  EXPECT_EQ(got["tool.crashes"], "crashed");
  EXPECT_EQ(got["tool.reads_environment"], "passed");     // ENVIRONMENT
  EXPECT_EQ(got["tool.in_working_directory"], "passed");  // WORKING_DIRECTORY
  EXPECT_EQ(got["tool.hangs"], "timed-out");              // TIMEOUT 1
  EXPECT_EQ(got["tool.expected_to_fail"], "passed");      // WILL_FAIL
  EXPECT_EQ(got["tool.skips"], "skipped");                // SKIP_RETURN_CODE
  EXPECT_EQ(got["tool.fixture_setup"], "passed");         // FIXTURES_SETUP, declared last
  EXPECT_EQ(got["tool.uses_fixture"], "passed");          // FIXTURES_REQUIRED
  EXPECT_EQ(got["tool.fixture_cleanup"], "passed");       // FIXTURES_CLEANUP, declared first
  // The timeout is the test's own (1 s), not the run's 30 s.
  EXPECT_LT(run.finished().at("ctest::tool.hangs")["result"]["duration_ms"].get<double>(), 10000);
  // RESOURCE_GROUPS "2,gpus:1": two GPUs of [devices], told as ctest tells them.
  EXPECT_EQ(got["tool.uses_two_gpus"], "passed");
  const auto log = read_file(
      run.finished().at("ctest::tool.uses_two_gpus")["result"]["ranks"][0]["log"].get<std::string>());
  EXPECT_NE(log.find("CTEST_RESOURCE_GROUP_0_GPUS=id:"), std::string::npos) << log;
  EXPECT_NE(log.find("CTEST_RESOURCE_GROUP_1_GPUS=id:"), std::string::npos) << log;
  // A resource type without devices ("cpus") is said once, not ignored silently.
  EXPECT_EQ(occurrences(run.err, "CTest resource type \"cpus\" is not among ranktest's devices"),
            1u) << run.err;
}

// Without devices for its type, a test that needs CTest's resource
// variables fails under ranktest as it fails under ctest without a spec.
TEST(Ctest, ResourceGroupsWithoutDevicesRunAsCtestRunsThemWithoutASpec) {
  std::string output;
  shell("cd '" + kBuild + "' && ctest -R tool.uses_two_gpus 2>&1", &output);
  EXPECT_EQ(ctest_outcomes(output), (std::map<std::string, std::string>{
                                        {"tool.uses_two_gpus", "failed"}})) << output;
  Workdir dir;
  dir.write("ranktest.toml", config_for(kBuild));
  const auto run = run_ranktest(dir, {"run", "--filter", "*uses_two_gpus"});
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_EQ(run.finished().at("ctest::tool.uses_two_gpus")["result"]["outcome"], "failed");
  EXPECT_NE(run.err.find("CTest resource type \"gpus\" is not among ranktest's devices, so 1 "
                         "test (e.g. ctest::tool.uses_two_gpus) runs without it, as ctest does "
                         "without --resource-spec-file; name its ids in [devices]"),
            std::string::npos) << run.err;
}

TEST(Ctest, PropertiesBecomeSettings) {
  Workdir dir;
  // With a trailing '/', the folder still labels the tests.
  dir.write("ranktest.toml", config_for(kBuild + "/"));
  const auto run = run_ranktest(dir, {"list"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("ctest::tool.alone  [slots 2, exclusive, label serial, label slow]"),
            std::string::npos) << run.out;
  EXPECT_NE(run.out.find("ctest::tool.hangs  [timeout 1s]"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("ctest::gtest.Arithmetic.Adds  [label unit]"), std::string::npos)
      << run.out;
  // Devices for RESOURCE_GROUPS only where [devices] has the type.
  EXPECT_NE(run.out.find("ctest::tool.uses_two_gpus\n"), std::string::npos) << run.out;
  Workdir with_gpus;
  with_gpus.write("ranktest.toml", config_for(kBuild) + kTwoGpus);
  const auto listed = run_ranktest(with_gpus, {"list", "--filter", "*uses_two_gpus"});
  EXPECT_EQ(listed.out, "ctest::tool.uses_two_gpus  [gpus 2]\n") << listed.out << listed.err;
}

// The settings every source takes reach a ctest source's tests too: its
// network and tmpdir (they were once left out, and the tests ran on the
// host's network).
TEST(Ctest, TheSourcesNetworkAndTmpdirReachItsTests) {
  Workdir dir;
  dir.write("ranktest.toml", config_for(kBuild) + "network = \"isolated\"\ntmpdir = \"private\"\n");
  const auto run = run_ranktest(dir, {"list", "--format", "json", "--filter", "*Arithmetic.Adds"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto tests = nlohmann::json::parse(run.out)["tests"];
  ASSERT_EQ(tests.size(), 1u) << run.out;
  EXPECT_EQ(tests[0]["network"], "isolated") << tests[0].dump();

  // And they run so: a network of its own (only the loopback device), a
  // TMPDIR of its own in its attempt's folder.
  std::filesystem::create_directories(dir.path() / "project");
  dir.write("project/CMakeLists.txt",
            "cmake_minimum_required(VERSION 3.25)\nproject(p NONE)\nenable_testing()\n"
            "add_test(NAME sees_only_loopback COMMAND sh -c "
            "\"test $(tail -n +3 /proc/net/dev | wc -l) = 1 && grep -q ' lo:' /proc/net/dev\")\n"
            "add_test(NAME has_its_own_tmpdir COMMAND sh -c "
            "\"case $TMPDIR in */attempt-1/*) test -d $TMPDIR ;; *) exit 1 ;; esac\")\n");
  std::string output;
  ASSERT_EQ(shell("cmake -S '" + (dir.path() / "project").string() + "' -B '" +
                      (dir.path() / "build").string() + "' 2>&1",
                  &output),
            0)
      << output;
  dir.write("ranktest.toml",
            config_for("build") + "network = \"isolated\"\ntmpdir = \"private\"\n");
  const auto isolated = run_ranktest(dir, {"run"});
  if (isolated.err.find("cannot create a network namespace") != std::string::npos)
    GTEST_SKIP() << "no network namespaces here: " << isolated.err;
  EXPECT_EQ(isolated.exit_code, 0) << isolated.out << isolated.err;
  EXPECT_EQ(isolated.last_out_line(), "ranktest: 2 passed, 0 failed, 0 skipped") << isolated.out;
  // On the host's network, the same test sees more than the loopback.
  dir.write("ranktest.toml", config_for("build"));
  const auto host = run_ranktest(dir, {"run", "--filter", "*sees_only_loopback"});
  EXPECT_EQ(host.exit_code, 1) << host.out << host.err;
}

// No ranktest.toml: a build folder named on the command line, or the
// working folder itself, runs as ctest would run it there.
TEST(Ctest, ABuildFolderNeedsNoConfiguration) {
  Workdir dir;
  auto run = run_ranktest(dir, {"list", kBuild});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("tool.passes"), std::string::npos) << run.out;
  std::string output;
  EXPECT_EQ(shell("cd '" + kBuild + "' && " RANKTEST_BINARY " list 2>&1", &output), 0);
  EXPECT_NE(output.find("ranktest: no ranktest.toml here; listing a CMake build folder "
                        "(CTestTestfile.cmake)"),
            std::string::npos)
      << output;
  EXPECT_NE(output.find("tool.passes"), std::string::npos) << output;
}

TEST(Ctest, AFolderCtestDoesNotKnowIsADiscoveryError) {
  Workdir dir;
  dir.write("ranktest.toml", config_for("."));
  const auto run = run_ranktest(dir, {"run"});
  EXPECT_EQ(run.exit_code, 3) << run.err;
  EXPECT_NE(run.err.find("is not a CTest build folder (no CTestTestfile.cmake in it)"),
            std::string::npos) << run.err;
  EXPECT_NE(run.err.find("ranktest.toml:3:1: "), std::string::npos) << run.err;
}

TEST(Ctest, KeysThatWouldChangeTheCommandAreRefused) {
  Workdir dir;
  dir.write("ranktest.toml", config_for(kBuild) + "args = [\"--verbose\"]\n");
  const auto run = run_ranktest(dir, {"run"});
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_NE(run.err.find("key 'args' in [[source]] is not for kind = \"ctest\" sources"),
            std::string::npos) << run.err;
}

// A verdict ranktest cannot reproduce is refused, never judged by the exit
// code alone (which would pass a test whose PASS_REGULAR_EXPRESSION fails).
TEST(Ctest, PassRegularExpressionIsRefused) {
  Workdir dir;
  std::filesystem::create_directories(dir.path() / "project");
  dir.write("project/CMakeLists.txt",
            "cmake_minimum_required(VERSION 3.25)\nproject(p NONE)\nenable_testing()\n"
            "add_test(NAME says_ok COMMAND true)\n"
            "set_tests_properties(says_ok PROPERTIES PASS_REGULAR_EXPRESSION \"ok\")\n");
  std::string output;
  ASSERT_EQ(shell("cmake -S '" + (dir.path() / "project").string() + "' -B '" +
                      (dir.path() / "build").string() + "' 2>&1",
                  &output),
            0)
      << output;
  dir.write("ranktest.toml", config_for("build"));
  const auto run = run_ranktest(dir, {"run"});
  EXPECT_EQ(run.exit_code, 1) << run.err;
  const auto finished = run.finished();
  ASSERT_TRUE(finished.contains("build::says_ok")) << run.out << run.err;
  const auto& result = finished.at("build::says_ok")["result"];
  EXPECT_EQ(result["outcome"], "error");
  EXPECT_EQ(result["reason"], "refused");
  EXPECT_NE(result.dump().find("PASS_REGULAR_EXPRESSION"), std::string::npos) << result.dump();
}

// A project whose tests only pass in CTest's order: a fixture's setup
// makes a file its tests read and its cleanup deletes (failing if it is
// not there), DEPENDS orders two of them, and two tests that take the same
// folder as a lock hold RESOURCE_LOCK. Each is declared before what it
// waits for, so a runner that started them in plan order would fail them.
const std::string kOrderedProject = R"(cmake_minimum_required(VERSION 3.25)
project(ordered NONE)
enable_testing()
set(state ${CMAKE_CURRENT_BINARY_DIR}/state)
add_test(NAME db.drop COMMAND sh -c "rm '${state}/db' && rm -rf '${state}'")
add_test(NAME db.update COMMAND sh -c "test -f '${state}/db' && test -f '${state}/marked'")
add_test(NAME db.query COMMAND sh -c "test -f '${state}/db'")
add_test(NAME db.mark COMMAND sh -c "sleep 0.2 && touch '${state}/marked'")
add_test(NAME db.create COMMAND sh -c "sleep 0.3 && mkdir -p '${state}' && echo up > '${state}/db'")
set_tests_properties(db.create PROPERTIES FIXTURES_SETUP db)
set_tests_properties(db.query db.update db.mark PROPERTIES FIXTURES_REQUIRED db)
set_tests_properties(db.update PROPERTIES DEPENDS db.mark)
set_tests_properties(db.drop PROPERTIES FIXTURES_CLEANUP db)
add_test(NAME net.down COMMAND true)
add_test(NAME net.ping COMMAND true)
add_test(NAME net.up COMMAND sh -c "exit 1")
set_tests_properties(net.up PROPERTIES FIXTURES_SETUP net)
set_tests_properties(net.ping PROPERTIES FIXTURES_REQUIRED net)
set_tests_properties(net.down PROPERTIES FIXTURES_CLEANUP net)
add_test(NAME lock.a COMMAND sh -c "mkdir '${CMAKE_CURRENT_BINARY_DIR}/held' && sleep 0.3 && rmdir '${CMAKE_CURRENT_BINARY_DIR}/held'")
add_test(NAME lock.b COMMAND sh -c "mkdir '${CMAKE_CURRENT_BINARY_DIR}/held' && sleep 0.3 && rmdir '${CMAKE_CURRENT_BINARY_DIR}/held'")
set_tests_properties(lock.a lock.b PROPERTIES RESOURCE_LOCK held)
)";

// Configures `cmake_lists` as a project in dir/project, built into dir/build.
void configure(Workdir& dir, const std::string& cmake_lists) {
  std::filesystem::create_directories(dir.path() / "project");
  dir.write("project/CMakeLists.txt", cmake_lists);
  std::string output;
  ASSERT_EQ(shell("cmake -S '" + (dir.path() / "project").string() + "' -B '" +
                      (dir.path() / "build").string() + "' 2>&1",
                  &output),
            0)
      << output;
}

std::map<std::string, std::string> ranktest_outcomes(const Invocation& run) {
  std::map<std::string, std::string> got;
  for (const auto& [id, event] : run.finished())
    got[id.substr(id.find("::") + 2)] = event["result"]["outcome"].get<std::string>();
  return got;
}

TEST(Ctest, DependsFixturesAndResourceLocksOrderTestsAsCtestDoes) {
  Workdir dir;
  configure(dir, kOrderedProject);
  std::string output;
  shell("cd '" + (dir.path() / "build").string() + "' && ctest -j4 2>&1", &output);
  const auto expected = ctest_outcomes(output);
  ASSERT_EQ(expected.size(), 10u) << output;

  dir.write("ranktest.toml", config_for("build"));
  const auto run = run_ranktest(dir, {"run", "-j4"});
  EXPECT_EQ(run.exit_code, 1) << run.err;
  const auto got = ranktest_outcomes(run);
  EXPECT_EQ(got, expected) << run.out << run.err;

  // Both agree on what each case stands for.
  for (const auto* name : {"db.create", "db.query", "db.mark", "db.update", "db.drop", "lock.a",
                           "lock.b", "net.down"})
    EXPECT_EQ(got.at(name), "passed") << name << "\n" << run.out;
  EXPECT_EQ(got.at("net.up"), "failed");
  EXPECT_EQ(got.at("net.ping"), "not-run");
  EXPECT_EQ(run.finished().at("build::net.ping")["result"]["reason"],
            "the setup test build::net.up of its fixture net ended failed");
  EXPECT_NE(run.out.find("ranktest: 1 test not run: the setup test build::net.up of its "
                         "fixture net ended failed (build::net.ping)"),
            std::string::npos)
      << run.out;
  EXPECT_TRUE(run.out.ends_with("ranktest: 8 passed, 1 failed, 0 skipped, 1 not run\n"))
      << run.out;
}

TEST(Ctest, SelectingARequirerBringsItsFixtureAsCtestRDoes) {
  Workdir dir;
  configure(dir, kOrderedProject);
  std::string output;
  shell("cd '" + (dir.path() / "build").string() + "' && ctest -R '^db.query$' 2>&1", &output);
  const auto expected = ctest_outcomes(output);
  EXPECT_EQ(expected, (std::map<std::string, std::string>{
                          {"db.create", "passed"}, {"db.query", "passed"}, {"db.drop", "passed"}}))
      << output;
  dir.write("ranktest.toml", config_for("build"));
  const auto run = run_ranktest(dir, {"run", "--exact", "build::db.query"});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_EQ(ranktest_outcomes(run), expected) << run.out;
}

TEST(Ctest, TestsWaitingForOneAnotherInACircleAreRefused) {
  Workdir dir;
  configure(dir, "cmake_minimum_required(VERSION 3.25)\nproject(p NONE)\nenable_testing()\n"
                 "add_test(NAME a COMMAND true)\nadd_test(NAME b COMMAND true)\n"
                 "add_test(NAME c COMMAND true)\n"
                 "set_tests_properties(a PROPERTIES DEPENDS b)\n"
                 "set_tests_properties(b PROPERTIES DEPENDS a)\n");
  dir.write("ranktest.toml", config_for("build"));
  const auto run = run_ranktest(dir, {"run"});
  EXPECT_EQ(run.exit_code, 3) << run.err;
  EXPECT_TRUE(run.err.find("wait for one another in a circle (a waits for b waits for a)") !=
                  std::string::npos ||
              run.err.find("wait for one another in a circle (b waits for a waits for b)") !=
                  std::string::npos)
      << run.err;
  EXPECT_NE(run.err.find("ranktest.toml:3:1: "), std::string::npos) << run.err;
}

// A fixture's setup that starts a server for the fixture's tests, as CTest
// projects do: the server lives until the fixture's tests end (not a leak),
// and ranktest ends it then if the cleanup did not. Any other test that
// leaves a process running still leaked.
TEST(Ctest, AFixtureSetupsServerLivesUntilTheFixturesTestsEnd) {
  Workdir dir;
  configure(dir, R"cmake(cmake_minimum_required(VERSION 3.25)
project(servers NONE)
enable_testing()
set(b ${CMAKE_CURRENT_BINARY_DIR})
add_test(NAME srv.start COMMAND sh -c "nohup sleep 30 > /dev/null 2>&1 & echo $! > '${b}/srv.pid'")
add_test(NAME srv.use COMMAND sh -c "sleep 0.3 && kill -0 $(cat '${b}/srv.pid')")
add_test(NAME srv.use_too COMMAND sh -c "kill -0 $(cat '${b}/srv.pid')")
add_test(NAME srv.stop COMMAND sh -c "kill $(cat '${b}/srv.pid')")
set_tests_properties(srv.start PROPERTIES FIXTURES_SETUP srv)
set_tests_properties(srv.use srv.use_too PROPERTIES FIXTURES_REQUIRED srv)
set_tests_properties(srv.stop PROPERTIES FIXTURES_CLEANUP srv)
add_test(NAME forgotten.start COMMAND sh -c "nohup sleep 30 > /dev/null 2>&1 & echo $! > '${b}/forgotten.pid'")
add_test(NAME forgotten.use COMMAND sh -c "kill -0 $(cat '${b}/forgotten.pid')")
set_tests_properties(forgotten.start PROPERTIES FIXTURES_SETUP forgotten)
set_tests_properties(forgotten.use PROPERTIES FIXTURES_REQUIRED forgotten)
)cmake");
  const auto build = (dir.path() / "build").string();
  std::string output;
  shell("cd '" + build + "' && ctest -j2 2>&1; kill $(cat forgotten.pid)", &output);
  const auto expected = ctest_outcomes(output);
  ASSERT_EQ(expected.size(), 6u) << output;
  for (const auto& [name, outcome] : expected) EXPECT_EQ(outcome, "passed") << name << output;

  dir.write("ranktest.toml", config_for("build"));
  const auto run = run_ranktest(dir, {"run", "-j2"});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_EQ(ranktest_outcomes(run), expected) << run.out;
  const auto reason = run.finished().at("build::srv.start")["result"]["reason"].get<std::string>();
  EXPECT_NE(reason.find("kept 1 process running for its fixture until the tests that need it "
                        "end (pid "),
            std::string::npos)
      << reason;
  // The server nobody stopped was ended with its fixture: nothing outlives the run.
  EXPECT_NE(shell("kill -0 $(cat '" + build + "/forgotten.pid') 2>/dev/null"), 0);
  EXPECT_TRUE(surviving_processes(run.run_dir()).empty());
}

TEST(Ctest, ATestThatIsNoFixtureSetupStillLeaks) {
  Workdir dir;
  configure(dir, "cmake_minimum_required(VERSION 3.25)\nproject(p NONE)\nenable_testing()\n"
                 "add_test(NAME leaks COMMAND sh -c \"nohup sleep 30 > /dev/null 2>&1 &\")\n");
  dir.write("ranktest.toml", config_for("build"));
  const auto run = run_ranktest(dir, {"run"});
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_EQ(run.finished().at("build::leaks")["result"]["outcome"], "leaked");
  EXPECT_TRUE(surviving_processes(run.run_dir()).empty());
}

}  // namespace
}  // namespace ranktest::testing
