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
