#include "events/journal.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "events/event.h"
#include "process/temporary_directory.h"

namespace ranktest::events {
namespace {

std::string contents(const std::filesystem::path& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// A runner killed between opening its journal and writing run-started must
// not leave an events.jsonl that says nothing: report and the next run's
// durations would read it as a broken journal.
TEST(Journal, AppearsUnderItsNameOnlyWithItsFirstEvent) {
  auto scratch = process::TemporaryDirectory::create("ranktest-unit-");
  ASSERT_TRUE(scratch);
  const auto path = scratch->path() / "events.jsonl";
  int started = 0;
  auto journal = Journal::open(path, [&] { ++started; });
  ASSERT_TRUE(journal) << journal.error().message;
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_EQ(started, 0);

  RunStarted run;
  run.run_id = "r1";
  (*journal)->report(Event(run));
  ASSERT_TRUE(std::filesystem::exists(path));
  EXPECT_FALSE(std::filesystem::exists(scratch->path() / ".events.jsonl.starting"));
  EXPECT_EQ(started, 1);
  const auto first = contents(path);
  EXPECT_NE(first.find("\"run-started\""), std::string::npos) << first;

  (*journal)->report(Event(RunFinished{}));
  EXPECT_EQ(started, 1);
  const auto both = contents(path);
  EXPECT_EQ(both.compare(0, first.size(), first), 0);
  EXPECT_NE(both.find("\"run-finished\""), std::string::npos) << both;
  EXPECT_EQ(std::count(both.begin(), both.end(), '\n'), 2);
}

TEST(Journal, AnUnwritableFolderIsSaidAtOpen) {
  auto journal = Journal::open("/nonexistent-ranktest-folder/events.jsonl");
  ASSERT_FALSE(journal);
  EXPECT_NE(journal.error().message.find("/nonexistent-ranktest-folder/events.jsonl: cannot "
                                         "write the event journal"),
            std::string::npos) << journal.error().message;
}

}  // namespace
}  // namespace ranktest::events
