// What CI systems read: GitHub Actions annotations and step summary, and
// the events as JSON lines on stdout.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <pugixml.hpp>
#include <set>
#include <sstream>

#include "harness.h"

namespace ranktest::testing {
namespace {

// (classname, name) of every testcase of a JUnit file.
std::set<std::pair<std::string, std::string>> junit_names(const std::filesystem::path& path) {
  pugi::xml_document document;
  EXPECT_TRUE(document.load_file(path.c_str())) << path;
  std::set<std::pair<std::string, std::string>> names;
  for (const auto& found : document.select_nodes("//testcase"))
    names.emplace(found.node().attribute("classname").value(),
                  found.node().attribute("name").value());
  return names;
}

// A CI's test history is keyed on the JUnit names: ranktest's must be those
// each framework's own file gives the same tests, or switching to ranktest
// starts every test's history again.
TEST(CiFormats, JunitNamesAreEachFrameworksOwn) {
  Workdir dir;
  std::filesystem::create_directories(dir.path() / "tests" / "sub");
  dir.write("pytest.ini", "[pytest]\n");
  dir.write("tests/test_a.py",
            "import pytest\n"
            "def test_one():\n    pass\n"
            "class TestB:\n"
            "    @pytest.mark.parametrize('x', ['x.y', 2])\n"
            "    def test_c(self, x):\n        assert x != 2\n");
  dir.write("tests/sub/test_d.py", "def test_e():\n    pass\n");
  std::string output;
  shell("cd " + dir.path().string() +
            " && /usr/bin/python3 -m pytest -q -p no:cacheprovider --junitxml=pytest.xml tests",
        &output);
  const auto pytest_names = junit_names(dir.path() / "pytest.xml");
  ASSERT_EQ(pytest_names.size(), 4u) << output;
  EXPECT_TRUE(pytest_names.count({"tests.test_a.TestB", "test_c[x.y]"})) << output;
  dir.write("ranktest.toml", "[[source]]\nkind = \"pytest\"\npython = \"/usr/bin/python3\"\n"
                             "paths = [\"tests\"]\n");
  run_ranktest(dir, {"run", "--junit", "ranktest.xml"});
  EXPECT_EQ(junit_names(dir.path() / "ranktest.xml"), pytest_names);

  // gtest's --gtest_output=xml, for plain and parametrized tests.
  Workdir gtest_dir;
  shell(fixture("params") + " --gtest_output=xml:" + (gtest_dir.path() / "gtest.xml").string() +
        " > /dev/null 2>&1");
  const auto gtest_names = junit_names(gtest_dir.path() / "gtest.xml");
  ASSERT_GT(gtest_names.size(), 2u);
  run_ranktest(gtest_dir, {"run", fixture("params"), "--junit", "ranktest.xml"});
  EXPECT_EQ(junit_names(gtest_dir.path() / "ranktest.xml"), gtest_names);

  // ctest's --output-junit.
  Workdir ctest_dir;
  std::filesystem::create_directories(ctest_dir.path() / "project");
  ctest_dir.write("project/CMakeLists.txt",
                  "cmake_minimum_required(VERSION 3.25)\nproject(p NONE)\nenable_testing()\n"
                  "add_test(NAME tool.works COMMAND true)\n"
                  "add_test(NAME tool.fails COMMAND false)\n");
  ASSERT_EQ(shell("cd " + ctest_dir.path().string() +
                      " && cmake -S project -B build > /dev/null 2>&1"
                      " && (ctest --test-dir build --output-junit " + (ctest_dir.path() / "ctest.xml").string() +
                      " > /dev/null 2>&1;"
                      " true)",
                  &output),
            0)
      << output;
  const auto ctest_names = junit_names(ctest_dir.path() / "ctest.xml");
  ASSERT_EQ(ctest_names.size(), 2u);
  ctest_dir.write("ranktest.toml", "[[source]]\nkind = \"ctest\"\npaths = [\"build\"]\n");
  run_ranktest(ctest_dir, {"run", "--junit", "ranktest.xml"});
  EXPECT_EQ(junit_names(ctest_dir.path() / "ranktest.xml"), ctest_names);
}

TEST(CiFormats, GithubActionsGetsAnnotationsAndASummary) {
  Workdir dir;
  const auto summary = dir.path() / "summary.md";
  setenv("GITHUB_ACTIONS", "true", 1);
  setenv("GITHUB_STEP_SUMMARY", summary.c_str(), 1);
  const auto run = run_ranktest(dir, {"run", fixture("outcomes"), "--filter", "Outcomes.Fails",
                                      "--filter", "Outcomes.Passes"});
  unsetenv("GITHUB_ACTIONS");
  unsetenv("GITHUB_STEP_SUMMARY");
  EXPECT_EQ(run.exit_code, 1);
  const auto annotation = run.out.find("::error file=");
  ASSERT_NE(annotation, std::string::npos) << run.out;
  const auto line = run.out.substr(annotation, run.out.find('\n', annotation) - annotation);
  EXPECT_NE(line.find("outcomes.cpp,line=13,title=failed fixture_outcomes%3A%3AOutcomes.Fails::"),
            std::string::npos) << line;
  EXPECT_NE(line.find("the answer is off"), std::string::npos) << line;
  EXPECT_EQ(line.find('\r'), std::string::npos);
  EXPECT_EQ(run.last_out_line(), "ranktest: 1 passed, 1 failed, 0 skipped");
  const auto markdown = read_file(summary);
  EXPECT_NE(markdown.find("### ranktest: 1 passed, 1 failed, 0 skipped"), std::string::npos)
      << markdown;
  EXPECT_NE(markdown.find("| failed | `fixture_outcomes::Outcomes.Fails` |"), std::string::npos)
      << markdown;
  // `ranktest report` of the stored run annotates the same failure.
  setenv("GITHUB_ACTIONS", "true", 1);
  const auto rebuilt = run_ranktest(dir, {"report", run.run_dir().string()});
  unsetenv("GITHUB_ACTIONS");
  EXPECT_NE(rebuilt.out.find(line), std::string::npos) << rebuilt.out;
}

TEST(CiFormats, MessageFormatJsonStreamsTheJournal) {
  Workdir dir;
  const auto run = run_ranktest(dir, {"run", fixture("outcomes"), "--filter", "Outcomes.Passes",
                                      "--message-format", "json"});
  EXPECT_EQ(run.exit_code, 0);
  std::istringstream lines(run.out);
  std::vector<nlohmann::json> events;
  for (std::string line; std::getline(lines, line);) {
    auto event = nlohmann::json::parse(line, nullptr, false);
    ASSERT_FALSE(event.is_discarded()) << "not JSON: " << line;
    events.push_back(event);
  }
  // Exactly the journal's events, in its order.
  ASSERT_EQ(events.size(), run.events().size());
  for (std::size_t i = 0; i < events.size(); ++i) EXPECT_EQ(events[i], run.events()[i]);
  EXPECT_EQ(events.front()["event"], "run-started");
  EXPECT_EQ(events.front()["schema_version"], 1);
  EXPECT_EQ(events.back()["event"], "run-finished");
}

// Every event a varied run emits is valid against docs/events.schema.json
// (checked with python3-jsonschema).
TEST(CiFormats, EmittedEventsFollowThePublishedSchema) {
  Workdir dir;
  dir.write("ranktest.toml",
            "timeout = \"1s\"\ngrace-period = \"1s\"\nslow = \"500ms\"\n"
            "[[source]]\npaths = [\"" + fixture("outcomes") + "\", \"" + fixture("ranks") +
                "\", \"" + fixture("swallowed") + "\"]\n"
            "[[override]]\nfilter = \"fixture_ranks::*\"\nranks = 3\n"
            "[[override]]\nfilter = \"fixture_swallowed::*\"\naudit-children = true\n");
  const auto run = run_ranktest(
      dir, {"run", "--message-format", "json", "--filter", "fixture_outcomes::*", "--filter",
            "fixture_ranks::Ranks.One*", "--filter", "fixture_swallowed::Swallowed.*"});
  dir.write("events.jsonl", run.out);
  std::string output;
  const int status = shell(
      "/usr/bin/python3 -c '"
      "import json, sys, jsonschema\n"
      "schema = json.load(open(sys.argv[1]))\n"
      "jsonschema.Draft202012Validator.check_schema(schema)\n"
      "validator = jsonschema.Draft202012Validator(schema)\n"
      "kinds = set()\n"
      "for number, line in enumerate(open(sys.argv[2]), 1):\n"
      "    event = json.loads(line)\n"
      "    kinds.add(event[\"event\"])\n"
      "    for error in validator.iter_errors(event):\n"
      "        sys.exit(\"line %d (%s): %s at %s\" % (number, event[\"event\"], error.message, list(error.path)))\n"
      "print(sorted(kinds))\n"
      "' " RANKTEST_SOURCE_DIR "/docs/events.schema.json " + (dir.path() / "events.jsonl").string(),
      &output);
  EXPECT_EQ(status, 0) << output;
  EXPECT_NE(output.find("'run-finished', 'run-started', 'test-finished', 'test-slow', 'test-started'"),
            std::string::npos) << output;
}

// The schedule as a Perfetto trace: a bar per test on every slot it held
// and every device it was granted, from the run and from its journal alike.
TEST(CiFormats, TraceShowsEachTestOnItsSlotsAndDevices) {
  Workdir dir;
  dir.write("ranktest.toml",
            "[devices]\ncpu-sim = 2\n"
            "[[source]]\npaths = [\"" + fixture("ranks") + "\"]\n"
            "[[override]]\nfilter = \"Many/*\"\nranks = 2\ndevices = { cpu-sim = 2 }\n");
  const auto run = run_ranktest(dir, {"run", "--filter", "Many/Rendezvous.TwoRanksAgree/[0-3]",
                                      "-j", "2", "--trace", "trace.json"});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  const auto trace = nlohmann::json::parse(read_file(dir.path() / "trace.json"));
  std::size_t slot_bars = 0, device_bars = 0;
  // Bars of one lane (a slot, a device) never overlap: nothing was shared.
  std::map<std::pair<int, int>, std::vector<std::pair<long long, long long>>> lanes;
  for (const auto& event : trace["traceEvents"]) {
    if (event["ph"] != "X") continue;
    EXPECT_GT(event["dur"].get<long long>(), 0);
    lanes[{event["pid"].get<int>(), event["tid"].get<int>()}].emplace_back(
        event["ts"].get<long long>(), event["dur"].get<long long>());
    EXPECT_EQ(event["args"]["outcome"], "passed");
    if (event["pid"] == 1) {
      ++slot_bars;
      EXPECT_LT(event["tid"].get<int>(), 2);
    } else {
      ++device_bars;
    }
  }
  EXPECT_EQ(slot_bars, 8u);    // 4 tests x 2 ranks' slots
  EXPECT_EQ(device_bars, 8u);  // 4 tests x 2 devices
  for (auto& [lane, bars] : lanes) {
    std::sort(bars.begin(), bars.end());
    for (std::size_t i = 1; i < bars.size(); ++i)
      EXPECT_GE(bars[i].first, bars[i - 1].first + bars[i - 1].second)
          << "lane " << lane.first << "/" << lane.second << " holds two tests at once";
  }
  const auto rebuilt = run_ranktest(dir, {"report", run.run_dir().string(), "--trace", "again.json"});
  EXPECT_EQ(nlohmann::json::parse(read_file(dir.path() / "again.json")), trace);
}

}  // namespace
}  // namespace ranktest::testing
