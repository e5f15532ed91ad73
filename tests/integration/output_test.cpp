// Whatever a test prints, and whatever it is called, ranktest's terminal
// output, events and JUnit report stay valid and small.
#include <gtest/gtest.h>

#include <pugixml.hpp>

#include "harness.h"

namespace ranktest::testing {
namespace {

std::string xmllint(const std::filesystem::path& report) {
  std::string output;
  const int status = shell("xmllint --noout --schema " RANKTEST_SOURCE_DIR
                           "/tests/schemas/junit.xsd " + report.string(), &output);
  return status == 0 ? "" : output;
}

TEST(Output, FiftyMegabytesStayInTheLog) {
  Workdir dir;
  const auto run = run_ranktest(
      dir, {"run", fixture("big_output"), "--filter", "BigOutput.*", "--junit", "junit.xml"});
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_EQ(run.last_out_line(), "ranktest: 0 passed, 1 failed, 0 skipped");
  const auto finished = run.finished();
  const auto& result =
      finished.at("fixture_big_output::BigOutput.Prints50MegabytesThenFails")["result"];
  EXPECT_EQ(result["outcome"], "failed");
  EXPECT_GE(std::filesystem::file_size(result["log"].get<std::string>()), 50'000'000u);
  // The terminal shows the end of the output, not 50 MB of it.
  EXPECT_LT(run.out.size(), 20'000u);
  EXPECT_NE(run.out.find("the last line"), std::string::npos);
  // The JUnit report keeps a bounded tail and says where the rest is.
  EXPECT_LT(std::filesystem::file_size(dir.path() / "junit.xml"), 1'000'000u);
  EXPECT_EQ(xmllint(dir.path() / "junit.xml"), "");
  const auto junit = read_file(dir.path() / "junit.xml");
  EXPECT_NE(junit.find("earlier bytes omitted"), std::string::npos);
}

// A 30 MB message (gtest's report, an assert or a skip in pytest) or
// 200,000 failures: each message is cut, its end says where the whole is,
// and nothing ranktest keeps grows with them (issue 28, #10).
TEST(Output, HugeMessagesAreCutInEveryReportAndInMemory) {
  Workdir dir;
  dir.write("test_big.py",
            "import pytest\n"
            "def test_asserts_huge():\n    assert False, 'a' * 30_000_000\n"
            "def test_skips_huge():\n    pytest.skip('s' * 30_000_000)\n"
            "def test_passes():\n    pass\n");
  dir.write("ranktest.toml",
            "timeout = \"60s\"\n[[source]]\npaths = [\"" + fixture("big_output") +
                "\"]\n[[source]]\nkind = \"pytest\"\npython = \"/usr/bin/python3\"\n"
                "paths = [\"test_big.py\"]\n");
  const auto run = run_ranktest(
      dir, {"run", "--filter", "*BigMessages.*", "--filter", "test_big.py::*", "--junit", "junit.xml"});
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_EQ(run.last_out_line(), "ranktest: 1 passed, 3 failed, 1 skipped") << run.out;
  const auto finished = run.finished();
  const auto& huge = finished.at("fixture_big_output::BigMessages.FailsWithA30MegabyteMessage")["result"];
  const std::string message = huge["failures"][0]["message"];
  EXPECT_LT(message.size(), 70'000u);
  EXPECT_NE(message.find("…[cut by ranktest; the whole is in "), std::string::npos) << message.substr(0, 200);
  const auto& many = finished.at("fixture_big_output::BigMessages.FailsTwoHundredThousandTimes")["result"];
  ASSERT_EQ(many["failures"].size(), 101u);
  EXPECT_NE(many["failures"][100]["message"].get<std::string>().find("199900 more entries"),
            std::string::npos) << many["failures"][100].dump();
  const auto& skipped = finished.at("test_big.py::test_skips_huge")["result"];
  EXPECT_EQ(skipped["outcome"], "skipped");
  EXPECT_LT(skipped["reason"].get<std::string>().size(), 70'000u);
  const auto& asserted = finished.at("test_big.py::test_asserts_huge")["result"];
  EXPECT_EQ(asserted["outcome"], "failed");
  EXPECT_LT(asserted.dump().size(), 1'000'000u);
  // What ranktest keeps: journal, history, JUnit, its own memory.
  EXPECT_LT(std::filesystem::file_size(run.run_dir() / "events.jsonl"), 8'000'000u);
  EXPECT_LT(std::filesystem::file_size(dir.path() / ".ranktest" / "history.db"), 8'000'000u);
  EXPECT_LT(std::filesystem::file_size(dir.path() / "junit.xml"), 8'000'000u);
  EXPECT_EQ(xmllint(dir.path() / "junit.xml"), "");
  const auto end = run.events().back();
  ASSERT_EQ(end["event"], "run-finished");
  EXPECT_GT(end["runner_peak_memory_bytes"].get<std::uint64_t>(), 0u);
  EXPECT_LT(end["runner_peak_memory_bytes"].get<std::uint64_t>(), 64u << 20) << end.dump();
  EXPECT_LT(run.out.size(), 200'000u);
}

TEST(Output, HostileBytesAreEscapedEverywhere) {
  Workdir dir;
  const auto run = run_ranktest(dir, {"run", fixture("invalid_utf8"), "--junit", "junit.xml"});
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_EQ(xmllint(dir.path() / "junit.xml"), "");
  pugi::xml_document document;
  ASSERT_TRUE(document.load_file((dir.path() / "junit.xml").c_str()));
  const auto failure = document.select_node("//failure").node();
  ASSERT_TRUE(failure);
  const std::string message = failure.child_value();
  EXPECT_NE(message.find("]]>"), std::string::npos);
  EXPECT_NE(message.find("<b>markup</b>"), std::string::npos);
  EXPECT_NE(message.find("café"), std::string::npos) << "valid UTF-8 survives";
  const std::string out = document.select_node("//system-out").node().child_value();
  EXPECT_NE(out.find("\\x1B[31mred"), std::string::npos) << out;
  EXPECT_NE(out.find("\\xFF\\xFE"), std::string::npos) << out;
  // The terminal gets no raw escape sequence, NUL or invalid byte.
  EXPECT_EQ(run.out.find('\x1b'), std::string::npos);
  EXPECT_EQ(run.out.find('\0'), std::string::npos);
  EXPECT_EQ(run.out.find('\xff'), std::string::npos);
  EXPECT_NE(run.out.find("\\x1B[31mred"), std::string::npos);
  // Every journal line is valid JSON (parsing would throw otherwise).
  EXPECT_EQ(run.events().size(), 4u);
}

TEST(Output, ParameterisedNamesAreListedAndRun) {
  Workdir dir;
  const auto list = run_ranktest(dir, {"list", fixture("params"), "--format", "json"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  const auto tests = nlohmann::json::parse(list.out)["tests"];
  std::map<std::string, nlohmann::json> by_name;
  for (const auto& test : tests) by_name[test["name"]] = test;
  // gtest's own order: typed tests register before parameterised ones.
  EXPECT_EQ(tests[0]["name"], "Sizes/0.ArePositive");
  ASSERT_EQ(by_name.size(), 5u);
  EXPECT_EQ(by_name["Unix/Paths.AreNotEmpty/1"]["value_param"], "\"../etc\"");
  EXPECT_EQ(by_name["Unix/Paths.AreNotEmpty/2"]["id"], "fixture_params::Unix/Paths.AreNotEmpty/2");
  EXPECT_EQ(by_name["Sizes/0.ArePositive"]["type_param"], "char");
  EXPECT_TRUE(by_name["Sizes/1.ArePositive"]["location"]["file"].get<std::string>().ends_with(
      "params.cpp"));

  const auto run = run_ranktest(dir, {"run", fixture("params")});
  EXPECT_EQ(run.exit_code, 0) << run.out;
  EXPECT_EQ(run.last_out_line(), "ranktest: 5 passed, 0 failed, 0 skipped");
  // Each test's files stay inside the run folder despite the '/' and '..'.
  for (const auto& [id, event] : run.finished()) {
    const auto log = std::filesystem::weakly_canonical(event["result"]["log"].get<std::string>());
    EXPECT_TRUE(log.string().starts_with(run.run_dir().string() + "/tests/")) << log;
  }
}

TEST(Output, NoCaptureLetsTestsWriteToTheTerminal) {
  Workdir dir;
  const auto run = run_ranktest(
      dir, {"run", fixture("outcomes"), "--no-capture", "--exact", "Outcomes.Fails"});
  EXPECT_EQ(run.exit_code, 1);
  // gtest's own output reached ranktest's stdout directly...
  EXPECT_NE(run.out.find("[ RUN      ] Outcomes.Fails"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("running 1 test with 1 job"), std::string::npos) << run.out;
  // ...and the result still comes from gtest's report.
  EXPECT_EQ(run.finished().at("fixture_outcomes::Outcomes.Fails")["result"]["outcome"], "failed");
  EXPECT_EQ(run.last_out_line(), "ranktest: 0 passed, 1 failed, 0 skipped");
}

TEST(Output, MaxOutputKeepsHeadAndTailOfAHugeLog) {
  Workdir dir;
  dir.write("ranktest.toml", "max-output = \"1MiB\"\n");
  const auto run = run_ranktest(dir, {"run", fixture("big_output"), "--junit", "junit.xml"});
  EXPECT_EQ(run.exit_code, 1) << run.err;
  const auto finished = run.finished();
  // The disk a test's log holds stays near the limit while it writes, not
  // only once it has ended (the test measures its own log).
  EXPECT_EQ(finished.at("fixture_big_output::BigOutputWhileRunning.HoldsLittleDiskBeforeItEnds")
                ["result"]["outcome"],
            "passed")
      << run.out;
  const auto log = finished.at("fixture_big_output::BigOutput.Prints50MegabytesThenFails")
                       ["result"]["log"].get<std::string>();
  EXPECT_LE(std::filesystem::file_size(log), (1u << 20) + 200);
  const auto text = read_file(log);
  EXPECT_LT(text.find("Note: Google Test filter"), 100u) << text.substr(0, 100);
  EXPECT_NE(text.find("bytes of output dropped here"), std::string::npos);
  EXPECT_NE(text.find("the last line"), std::string::npos);
  EXPECT_NE(run.out.find("the last line"), std::string::npos);
}

}  // namespace
}  // namespace ranktest::testing
