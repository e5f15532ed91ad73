// What ranktest prints on a real terminal (a pseudo-terminal here): the live
// status line with the running tests and an ETA, colours; none of it under
// NO_COLOR (no escape sequences) or into a pipe (plain lines).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <optional>

#include "harness.h"

namespace ranktest::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

struct TerminalRun {
  int exit_code = -1;
  std::string screen;  // every byte written to the terminal
};

// Runs ranktest with a 100-column pseudo-terminal as stdout and stderr;
// `environment` entries are set (a value) or unset (none) in it first.
TerminalRun run_on_terminal(
    const Workdir& dir, const std::vector<std::string>& args,
    const std::vector<std::pair<std::string, std::optional<std::string>>>& environment) {
  winsize size{};
  size.ws_col = 100;
  size.ws_row = 40;
  int terminal = -1;
  const pid_t pid = forkpty(&terminal, nullptr, nullptr, &size);
  if (pid == 0) {
    if (chdir(dir.path().c_str()) != 0) _exit(126);
    unsetenv("RANKTEST_TEST_ID");
    for (const auto& [name, value] : environment) {
      if (value) setenv(name.c_str(), value->c_str(), 1);
      else unsetenv(name.c_str());
    }
    std::vector<char*> argv{const_cast<char*>(RANKTEST_BINARY)};
    for (const auto& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    execv(RANKTEST_BINARY, argv.data());
    _exit(127);
  }
  TerminalRun run;
  char buffer[4096];
  for (;;) {
    const auto got = read(terminal, buffer, sizeof buffer);
    if (got > 0) run.screen.append(buffer, static_cast<std::size_t>(got));
    else if (got < 0 && errno == EINTR) continue;
    else break;  // EIO: the last process holding the terminal closed it
  }
  close(terminal);
  int status = 0;
  waitpid(pid, &status, 0);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return run;
}

const std::vector<std::string> kSlowRun = {"run", "-j", "2", fixture("slow")};

TEST(Terminal, LiveStatusLineShowsTheRunningTestAndAnEta) {
  Workdir dir;
  // A process per test: the quick tests end in one slot while the slow one
  // runs in the other (in a worker they would wait behind it).
  dir.write("ranktest.toml", "isolation = \"test\"\n");
  // The first run gives the durations the second run's ETA comes from.
  ASSERT_EQ(run_on_terminal(dir, kSlowRun, {{"TERM", "xterm"}, {"NO_COLOR", std::nullopt}})
                .exit_code, 0);
  const auto run = run_on_terminal(dir, kSlowRun, {{"TERM", "xterm"}, {"NO_COLOR", std::nullopt}});
  EXPECT_EQ(run.exit_code, 0) << run.screen;
  // Redrawn in place while Slow.TakesTwoSeconds runs, with its elapsed time.
  EXPECT_THAT(run.screen, HasSubstr("running: fixture_slow::Slow.TakesTwoSeconds 1."));
  EXPECT_THAT(run.screen, HasSubstr("\r 4/5  0:01  ETA 0:0"));
  EXPECT_THAT(run.screen, HasSubstr("\x1b[K"));
  EXPECT_THAT(run.screen, HasSubstr("\x1b[32m    PASS\x1b[0m"));
  // The line is gone at the end: the summary is the last thing on screen.
  const std::string summary = "\nranktest: 5 passed, 0 failed, 0 skipped\r\n";
  ASSERT_GT(run.screen.size(), summary.size());
  EXPECT_EQ(run.screen.substr(run.screen.size() - summary.size()), summary);
  const auto last_redraw = run.screen.rfind("running:");
  EXPECT_LT(last_redraw, run.screen.rfind("------------"));
}

TEST(Terminal, NoColorMeansNoEscapeSequencesAtAll) {
  Workdir dir;
  const auto run = run_on_terminal(dir, kSlowRun, {{"TERM", "xterm"}, {"NO_COLOR", "1"}});
  EXPECT_EQ(run.exit_code, 0) << run.screen;
  EXPECT_THAT(run.screen, Not(HasSubstr("\x1b")));
  // Still a live line, cleared with spaces instead.
  EXPECT_THAT(run.screen, HasSubstr("running: fixture_slow::Slow.TakesTwoSeconds"));
}

TEST(Terminal, ColorNeverAndADumbTerminalGetPlainLines) {
  Workdir dir;
  const auto never = run_on_terminal(dir, {"run", "--color", "never", "--exact", "fixture_outcomes::Outcomes.Fails",
                                      fixture("outcomes")},
                                     {{"TERM", "xterm"}, {"NO_COLOR", std::nullopt}});
  EXPECT_THAT(never.screen, HasSubstr("    FAIL ["));
  EXPECT_THAT(never.screen, Not(HasSubstr("\x1b[")));
  const auto dumb = run_on_terminal(dir, kSlowRun, {{"TERM", "dumb"}, {"NO_COLOR", std::nullopt}});
  EXPECT_THAT(dumb.screen, Not(HasSubstr("\x1b")));
  EXPECT_THAT(dumb.screen, Not(HasSubstr("running:")));
}

TEST(Terminal, APipeGetsPlainLinesEvenWithColorAuto) {
  Workdir dir;
  const auto run = run_ranktest(dir, kSlowRun);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, Not(HasSubstr("\x1b")));
  EXPECT_THAT(run.out, Not(HasSubstr("\r")));
  EXPECT_THAT(run.out, Not(HasSubstr("running:")));
}

}  // namespace
}  // namespace ranktest::testing
