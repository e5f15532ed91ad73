#include "report/terminal_reporter.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "run_events.h"

namespace ranktest::report {
namespace {

// Collects what the reporter prints.
class Screen {
 public:
  Screen() : file_(open_memstream(&buffer_, &size_)) {}
  ~Screen() {
    std::fclose(file_);
    std::free(buffer_);
  }
  std::FILE* file() { return file_; }
  std::string text() {
    std::fflush(file_);
    return std::string(buffer_, size_);
  }

 private:
  char* buffer_ = nullptr;
  std::size_t size_ = 0;
  std::FILE* file_;
};

using testing::started_run;

TerminalOptions options(std::string rerun, StatusLevel during = StatusLevel::skip,
                        StatusLevel at_end = StatusLevel::fail) {
  TerminalOptions options;
  options.rerun_command = std::move(rerun);
  options.status_level = during;
  options.final_status_level = at_end;
  return options;
}

events::TestFinished finished(const std::string& name, Outcome outcome) {
  events::TestFinished event;
  event.test = events::TestInfo{"bin::" + name, name, "bin", std::nullopt, "gtest"};
  event.result.outcome = outcome;
  return event;
}

TEST(TerminalReporter, QuietForPassesPreciseForFailures) {
  Screen screen;
  TerminalReporter reporter(screen.file(), options("ranktest run -c x.toml"));
  reporter.report(started_run(3));
  reporter.report(finished("A.Passes", Outcome::passed));
  auto failure = finished("A.Fails", Outcome::failed);
  failure.result.failures.push_back({SourceLocation{"a.cpp", 9}, "Expected: 1\n  Actual: 2"});
  failure.result.output_excerpt = "step one\n\x1b[31mstep two\n";
  failure.result.log_path = "runs/r/tests/A.Fails/attempt-1/output.log";
  reporter.report(failure);
  auto crash = finished("A.Crashes", Outcome::crashed);
  crash.result.reason = "SIGSEGV";
  crash.placement.devices["cuda"] = {"2", "3"};
  reporter.report(crash);
  events::RunFinished end;
  end.counts.passed = 1;
  end.counts.failed = 2;
  reporter.report(end);

  const auto text = screen.text();
  EXPECT_NE(text.find("    PASS [   0.000s] bin::A.Passes\n"), std::string::npos) << text;
  EXPECT_NE(text.find("    FAIL [   0.000s] bin::A.Fails\n"
                      "      a.cpp:9: Expected: 1\n"
                      "        Actual: 2\n"
                      "      output:\n"
                      "      | step one\n"
                      "      | \\x1B[31mstep two\n"
                      "      log: runs/r/tests/A.Fails/attempt-1/output.log\n"
                      "      rerun: ranktest run -c x.toml --exact bin::A.Fails\n"),
            std::string::npos) << text;
  EXPECT_NE(text.find("   CRASH [   0.000s] bin::A.Crashes (SIGSEGV)\n"), std::string::npos);
  EXPECT_NE(text.find("rerun: ranktest run -c x.toml --devices cuda=2,3 --exact bin::A.Crashes\n"),
            std::string::npos) << text;
  EXPECT_NE(text.find("ranktest: did not pass:\n"
                      "    FAIL bin::A.Fails    a.cpp:9\n"
                      "   CRASH bin::A.Crashes  SIGSEGV\n"),
            std::string::npos) << text;
  EXPECT_TRUE(text.ends_with("\nranktest: 1 passed, 2 failed, 0 skipped\n")) << text;
}

// nextest's status levels: what prints as tests finish, and what is listed
// again at the end. The summary line is always last.
TEST(TerminalReporter, StatusLevelsChooseWhatIsPrinted) {
  const auto run = [](StatusLevel during, StatusLevel at_end) {
    Screen screen;
    TerminalReporter reporter(screen.file(), options("ranktest run", during, at_end));
    reporter.report(started_run(3));
    reporter.report(finished("A.Passes", Outcome::passed));
    reporter.report(finished("A.Skips", Outcome::skipped));
    reporter.report(finished("A.Fails", Outcome::failed));
    events::RunFinished end;
    end.counts.passed = end.counts.failed = end.counts.skipped = 1;
    reporter.report(end);
    return screen.text();
  };
  const auto quiet = run(StatusLevel::fail, StatusLevel::fail);
  EXPECT_EQ(quiet.find("PASS"), std::string::npos) << quiet;
  EXPECT_EQ(quiet.find("SKIP"), std::string::npos) << quiet;
  EXPECT_NE(quiet.find("    FAIL [   0.000s] bin::A.Fails"), std::string::npos) << quiet;
  EXPECT_NE(quiet.find("ranktest: did not pass:"), std::string::npos) << quiet;
  const auto silent = run(StatusLevel::none, StatusLevel::none);
  EXPECT_EQ(silent.find("FAIL"), std::string::npos) << silent;
  EXPECT_TRUE(silent.ends_with("ranktest: 1 passed, 1 failed, 1 skipped\n")) << silent;
  const auto everything = run(StatusLevel::all, StatusLevel::all);
  EXPECT_NE(everything.find("    PASS [   0.000s] bin::A.Passes"), std::string::npos);
  EXPECT_NE(everything.find("    SKIP [   0.000s] bin::A.Skips"), std::string::npos);
  EXPECT_NE(everything.find("\n    PASS bin::A.Passes\n"), std::string::npos) << everything;
  EXPECT_NE(everything.find("\n    SKIP bin::A.Skips\n"), std::string::npos) << everything;
}

// One generated name of 5,000 characters must not pad every summary line
// to its length: the summary's name column is 80 characters, a longer name
// cut with "…". The test's own line and its rerun command keep all of it.
TEST(TerminalReporter, TheSummaryCapsTheNameColumn) {
  Screen screen;
  TerminalReporter reporter(screen.file(), options("ranktest run", StatusLevel::skip,
                                                   StatusLevel::all));
  reporter.report(started_run(4));
  const std::string long_name = "Param.Case/" + std::string(4989, 'x');
  auto long_failure = finished(long_name, Outcome::failed);
  long_failure.result.reason = "exit code 1";
  reporter.report(long_failure);
  auto short_failure = finished("A.Fails", Outcome::failed);
  short_failure.result.reason = "exit code 2";
  reporter.report(short_failure);
  reporter.report(finished("P." + std::string(200, 'p'), Outcome::passed));
  reporter.report(finished("A.Passes", Outcome::passed));
  events::RunFinished end;
  end.counts.passed = 2;
  end.counts.failed = 2;
  reporter.report(end);
  const auto text = screen.text();
  const auto summary = text.substr(text.find("ranktest: 4 tests in"));
  std::size_t longest = 0;
  for (std::size_t at = 0, end_of_line; at < summary.size(); at = end_of_line + 1) {
    end_of_line = summary.find('\n', at);
    longest = std::max(longest, end_of_line - at);
  }
  // Label (8), a space, 80 characters (the last "…", 3 bytes), two spaces,
  // the detail.
  EXPECT_LE(longest, 8u + 1 + 82 + 2 + 11) << summary;
  const std::string cut = "bin::Param.Case/" + std::string(80 - 17, 'x') + "…";
  EXPECT_NE(summary.find("    FAIL " + cut + "  exit code 1\n"), std::string::npos) << summary;
  EXPECT_NE(summary.find("    FAIL bin::A.Fails" + std::string(80 - 12, ' ') + "  exit code 2\n"),
            std::string::npos)
      << summary;
  EXPECT_NE(summary.find("    PASS bin::P." + std::string(80 - 8, 'p') + "…\n"), std::string::npos)
      << summary;
  EXPECT_NE(summary.find("    PASS bin::A.Passes\n"), std::string::npos) << summary;
  // Before the summary, the failure's own line and rerun name it whole (up
  // to the 400 bytes any terminal line gets).
  EXPECT_NE(text.find("--exact bin::" + long_name), std::string::npos);
}

TEST(ShellQuote, QuotesOnlyWhatNeedsIt) {
  EXPECT_EQ(shell_quote("bin::A.B/0"), "bin::A.B/0");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_quote("a b"), "'a b'");
  EXPECT_EQ(shell_quote(""), "''");
}

// A name's control bytes would act on the terminal that shows the rerun
// line; bash's $'' quoting writes them as escapes the shell reads back.
TEST(ShellQuote, ControlBytesAndInvalidUtf8BecomeEscapesTheShellReadsBack) {
  EXPECT_EQ(shell_quote("t\r\x1b[2Kx"), "$'t\\x0D\\x1B[2Kx'");
  EXPECT_EQ(shell_quote("bad\xff'\\"), "$'bad\\xFF\\'\\\\'");
  EXPECT_EQ(shell_quote("caf\xc3\xa9 x"), "'caf\xc3\xa9 x'");
  // bash reads the word back as the very bytes of the name.
  const std::string name = "t\r\x1b[2Kx\xff'\\ \xc3\xa9";
  char script[] = "/tmp/ranktest-quote-XXXXXX";
  const int fd = mkstemp(script);
  ASSERT_GE(fd, 0);
  const std::string line = "printf %s " + shell_quote(name) + "\n";
  ASSERT_EQ(write(fd, line.data(), line.size()), static_cast<ssize_t>(line.size()));
  close(fd);
  std::FILE* pipe = popen(("bash " + std::string(script)).c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string read_back;
  char buffer[256];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) read_back.append(buffer, n);
  EXPECT_EQ(pclose(pipe), 0);
  unlink(script);
  EXPECT_EQ(read_back, name);
}

}  // namespace
}  // namespace ranktest::report
