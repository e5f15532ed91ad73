// quarantine: a known-broken test still runs and is reported, apart, and
// cannot fail the run, until a date: an entry past it refuses the run.
#include <gtest/gtest.h>
#include <pugixml.hpp>

#include <cstdlib>
#include <string>

#include "harness.h"

namespace ranktest::testing {
namespace {

std::string config_with(const std::string& quarantine) {
  return "junit = \"junit.xml\"\n[[source]]\npaths = [\"" + fixture("outcomes") + "\"]\n\n" +
         quarantine;
}

TEST(Quarantine, AQuarantinedFailureIsReportedApartAndCannotFailTheRun) {
  Workdir dir;
  dir.write("ranktest.toml",
            config_with("[[quarantine]]\ntest = \"*Outcomes.Fails\"\nuntil = 2099-12-31\n"
                        "reason = \"issue 12: off by one\"\n"));
  setenv("GITHUB_ACTIONS", "true", 1);
  const auto run = run_ranktest(dir, {"run", "--filter", "*Outcomes.Fails", "--filter",
                                      "*Outcomes.Passes"});
  unsetenv("GITHUB_ACTIONS");
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("ranktest: 1 quarantined test (run and reported; no outcome of theirs "
                         "fails the run):\n QUARANT fixture_outcomes::Outcomes.Fails  failed ("),
            std::string::npos) << run.out;
  EXPECT_NE(run.out.find("quarantined until 2099-12-31: issue 12: off by one"), std::string::npos);
  EXPECT_EQ(run.last_out_line(), "ranktest: 1 passed, 0 failed, 0 skipped, 1 quarantined");
  EXPECT_EQ(run.out.find("did not pass"), std::string::npos) << run.out;
  // GitHub: a warning, never an error.
  EXPECT_NE(run.out.find("::warning title=quarantined fixture_outcomes%3A%3AOutcomes.Fails::failed"),
            std::string::npos) << run.out;
  EXPECT_EQ(run.out.find("::error"), std::string::npos) << run.out;
  // The event says so, with the entry's place.
  const auto finished = run.finished().at("fixture_outcomes::Outcomes.Fails");
  EXPECT_EQ(finished["result"]["outcome"], "failed");
  EXPECT_EQ(finished["quarantined"]["reason"], "issue 12: off by one");
  EXPECT_EQ(finished["quarantined"]["until"], "2099-12-31");
  EXPECT_EQ(finished["quarantined"]["place"], "ranktest.toml:5:1");
  EXPECT_TRUE(run.finished().at("fixture_outcomes::Outcomes.Passes")["quarantined"].is_null());
  // JUnit: skipped, the failure in its message and output.
  pugi::xml_document junit;
  ASSERT_TRUE(junit.load_file((dir.path() / "junit.xml").c_str()));
  const auto testcase = junit.select_node("//testcase[@name='Fails']").node();
  ASSERT_TRUE(testcase);
  EXPECT_FALSE(testcase.child("failure"));
  const std::string message = testcase.child("skipped").attribute("message").value();
  EXPECT_EQ(message.rfind("quarantined until 2099-12-31 (issue 12: off by one): ranktest.toml:5:1; "
                          "it failed: ", 0), 0u) << message;
  EXPECT_STREQ(junit.child("testsuites").attribute("failures").value(), "0");
  EXPECT_STREQ(junit.child("testsuites").attribute("skipped").value(), "1");
}

TEST(Quarantine, AQuarantinedTestThatPassesSaysSo) {
  Workdir dir;
  dir.write("quarantine.toml", "quarantine = [\n  { test = \"fixture_outcomes::Outcomes.Passes\", "
                               "until = \"2099-01-01\", reason = \"was broken\" },\n]\n");
  dir.write("ranktest.toml", config_with(""));
  const auto run = run_ranktest(dir, {"run", "--quarantine", "quarantine.toml", "--exact",
                                      "fixture_outcomes::Outcomes.Passes"});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find(" QUARANT fixture_outcomes::Outcomes.Passes  passes again: remove it from "
                         "the quarantine (quarantine.toml:2:3)"),
            std::string::npos) << run.out;
  EXPECT_EQ(run.last_out_line(), "ranktest: 1 passed, 0 failed, 0 skipped");
}

TEST(Quarantine, AnEntryPastItsDateRefusesTheRunNamingItsPlace) {
  Workdir dir;
  dir.write("ranktest.toml",
            config_with("[[quarantine]]\ntest = \"*Fails\"\nuntil = \"2020-01-31\"\n"
                        "reason = \"issue 7\"\n"));
  const auto run = run_ranktest(dir, {"run"});
  EXPECT_EQ(run.exit_code, 2) << run.out << run.err;
  EXPECT_EQ(run.err, "ranktest: error: ranktest.toml:5:1: the quarantine of \"*Fails\" ended on "
                     "2020-01-31 (issue 7); the test counts again: fix it and remove the entry, or "
                     "move `until` on if it must stay quarantined\n");
  EXPECT_FALSE(std::filesystem::exists(dir.path() / ".ranktest" / "runs"));
  // An entry without a reason, or with a date that is none, names its place.
  dir.write("ranktest.toml", config_with("[[quarantine]]\ntest = \"*Fails\"\nuntil = \"2099-01-31\"\n"));
  const auto unexplained = run_ranktest(dir, {"run"});
  EXPECT_EQ(unexplained.exit_code, 2);
  EXPECT_NE(unexplained.err.find("ranktest.toml:5:1: this quarantine entry has no 'reason'"),
            std::string::npos) << unexplained.err;
  dir.write("ranktest.toml", config_with("[[quarantine]]\ntest = \"*Fails\"\nuntil = \"31.01.2099\"\n"
                                         "reason = \"x\"\n"));
  const auto undated = run_ranktest(dir, {"run"});
  EXPECT_EQ(undated.exit_code, 2);
  EXPECT_NE(undated.err.find("ranktest.toml:7:9"), std::string::npos) << undated.err;
  EXPECT_NE(undated.err.find("YYYY-MM-DD"), std::string::npos) << undated.err;
}

}  // namespace
}  // namespace ranktest::testing
