// Every flag a subcommand's --help offers is described in the docs (or the
// README): a flag added without documentation fails here.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <set>

#include "harness.h"

namespace ranktest::testing {
namespace {

TEST(CliDocs, EveryFlagOfEverySubcommandIsDocumented) {
  std::string docs = read_file(RANKTEST_SOURCE_DIR "/README.md");
  for (const auto& entry : std::filesystem::directory_iterator(RANKTEST_SOURCE_DIR "/docs"))
    if (entry.path().extension() == ".md") docs += read_file(entry.path());
  Workdir dir;
  const std::regex flag("--[a-z][a-z-]+");
  std::set<std::string> flags;
  for (const std::string command : {"run", "rerun", "list", "report", "merge", "history"}) {
    const auto help = run_ranktest(dir, {command, "--help"});
    ASSERT_EQ(help.exit_code, 0) << command << ": " << help.err;
    for (std::sregex_iterator it(help.out.begin(), help.out.end(), flag), end; it != end; ++it)
      flags.insert(it->str());
  }
  flags.erase("--help");
  EXPECT_GT(flags.size(), 20u);
  for (const auto& name : flags)
    EXPECT_NE(docs.find(name), std::string::npos) << name << " is not in docs/ or the README";
}

}  // namespace
}  // namespace ranktest::testing
