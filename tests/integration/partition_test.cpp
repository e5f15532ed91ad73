// --partition splits one suite over CI jobs; `ranktest merge` puts their run
// folders back together into one summary, JUnit file and HTML report.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "harness.h"

namespace ranktest::testing {
namespace {

using ::testing::HasSubstr;

std::string share(const std::string& strategy, int k, int n) {
  return strategy + ":" + std::to_string(k) + "/" + std::to_string(n);
}

std::vector<std::string> suite() {
  return {fixture("params"), fixture("outcomes"), fixture("flaky"), "--filter", "*Paths*",
          "--filter", "*Outcomes.Passes", "--filter", "*Outcomes.Fails", "--filter",
          "*Outcomes.Segfaults", "--filter", "*Outcomes.Skips", "--filter", "*Flaky.*"};
}

std::set<std::string> listed(const Workdir& dir, std::vector<std::string> extra) {
  std::vector<std::string> args{"list"};
  for (const auto& arg : suite()) args.push_back(arg);
  args.insert(args.end(), extra.begin(), extra.end());
  const auto run = run_ranktest(dir, args);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  const auto lines = run.out_lines();
  std::set<std::string> ids;
  for (const auto& line : lines) ids.insert(line.substr(0, line.find("  [")));
  EXPECT_EQ(ids.size(), lines.size());
  return ids;
}

TEST(Partition, ThePartsTogetherListEveryTestOnce) {
  Workdir dir;
  const auto all = listed(dir, {});
  ASSERT_EQ(all.size(), 11u);  // 3 Paths, 4 Outcomes, 4 Flaky
  for (const std::string strategy : {"hash", "time"})
    for (int count : {1, 2, 3, 5}) {
      std::multiset<std::string> union_of_parts;
      for (int k = 1; k <= count; ++k) {
        const auto part = listed(dir, {"--partition", share(strategy, k, count)});
        union_of_parts.insert(part.begin(), part.end());
      }
      EXPECT_EQ(std::set<std::string>(union_of_parts.begin(), union_of_parts.end()), all)
          << strategy << " " << count;
      EXPECT_EQ(union_of_parts.size(), all.size()) << strategy << " " << count;
    }
}

TEST(Partition, MergeOfThePartsIsTheWholeRun) {
  Workdir dir;
  std::vector<std::string> whole_args{"run", "--retries", "1"};
  for (const auto& arg : suite()) whole_args.push_back(arg);
  const auto whole = run_ranktest(dir, whole_args);
  ASSERT_EQ(whole.exit_code, 1) << whole.out;

  std::vector<std::string> merge_args{"merge", "--junit", "merged.xml", "--html", "merged.html"};
  for (int k = 1; k <= 3; ++k) {
    std::vector<std::string> args{"run", "--retries", "1", "--partition", share("hash", k, 3),
                                  "--state-dir", "part" + std::to_string(k)};
    for (const auto& arg : suite()) args.push_back(arg);
    const auto part = run_ranktest(dir, args);
    EXPECT_NE(part.exit_code, 4) << part.err;
    merge_args.push_back((dir.path() / ("part" + std::to_string(k)) / "runs" / "latest").string());
  }
  const auto merged = run_ranktest(dir, merge_args);
  EXPECT_EQ(merged.exit_code, 1) << merged.err;
  EXPECT_EQ(merged.last_out_line(), whole.last_out_line()) << merged.out;
  EXPECT_THAT(merged.out, HasSubstr("2 flaky tests"));
  EXPECT_TRUE(merged.err.empty()) << merged.err;
  EXPECT_EQ(occurrences(read_file(dir.path() / "merged.xml"), "<testcase "),
            whole.finished().size());
  EXPECT_THAT(read_file(dir.path() / "merged.html"), HasSubstr("merge of 3 runs"));

  // Folders moved elsewhere (CI artifacts downloaded by another job) still
  // give every log to the report.
  std::filesystem::rename(dir.path() / "part1", dir.path() / "artifact1");
  auto moved_args = merge_args;
  moved_args[4] = "moved.html";
  moved_args[5] = (dir.path() / "artifact1" / "runs" / "latest").string();
  const auto moved = run_ranktest(dir, moved_args);
  EXPECT_EQ(moved.last_out_line(), whole.last_out_line());
  const auto runs_of = [&](const std::string& file) {
    return occurrences(read_file(dir.path() / file), "[ RUN      ]");
  };
  EXPECT_GT(runs_of("merged.html"), 0u);
  EXPECT_EQ(runs_of("moved.html"), runs_of("merged.html"));
  merge_args[5] = moved_args[5];

  // The same run twice would count every test twice: refused, naming both.
  const auto twice = run_ranktest(dir, {"merge", merge_args[5], merge_args[5]});
  EXPECT_EQ(twice.exit_code, 2) << twice.out << twice.err;
  EXPECT_THAT(twice.err, HasSubstr("are the same run"));
  EXPECT_THAT(twice.err, HasSubstr("give each run once"));
  EXPECT_EQ(twice.out.find("passed"), std::string::npos) << twice.out;
}

TEST(Partition, ABadPartitionIsAUsageError) {
  Workdir dir;
  const auto run = run_ranktest(dir, {"run", "--partition", "hash:4/3", fixture("params")});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.err, HasSubstr("'hash:4/3' is not a partition; write hash:K/N or time:K/N"));
}

}  // namespace
}  // namespace ranktest::testing
