// A source that cannot be listed stops the run with an error that names it
// and quotes what it printed; no test is dropped silently.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>

#include "harness.h"

namespace ranktest::testing {
namespace {

TEST(DiscoveryErrors, MissingBinary) {
  Workdir dir;
  const auto run = run_ranktest(dir, {"run", "no_such_test_binary"});
  EXPECT_EQ(run.exit_code, 3);
  EXPECT_NE(run.err.find("no_such_test_binary: no such test binary"), std::string::npos)
      << run.err;
}

TEST(DiscoveryErrors, NotExecutable) {
  Workdir dir;
  dir.write("plain_file", "not a program");
  const auto run = run_ranktest(dir, {"run", "plain_file"});
  EXPECT_EQ(run.exit_code, 3);
  EXPECT_NE(run.err.find("plain_file: the file is not executable"), std::string::npos)
      << run.err;
}

TEST(DiscoveryErrors, CrashWhileListing) {
  Workdir dir;
  const auto run = run_ranktest(dir, {"run", fixture("crash_on_list")});
  EXPECT_EQ(run.exit_code, 3);
  EXPECT_NE(run.err.find("fixture_crash_on_list: crashed with SIGABRT"), std::string::npos)
      << run.err;
  EXPECT_NE(run.err.find("| loading plugins..."), std::string::npos) << run.err;
  EXPECT_EQ(run.out.find("passed"), std::string::npos) << "nothing ran";
}

TEST(DiscoveryErrors, UnparsableListing) {
  Workdir dir;
  const auto run = run_ranktest(dir, {"list", fixture("not_gtest")});
  EXPECT_EQ(run.exit_code, 3);
  EXPECT_NE(run.err.find("fixture_not_gtest: printed a listing ranktest cannot parse"),
            std::string::npos) << run.err;
  EXPECT_NE(run.err.find("| usage: not_gtest"), std::string::npos) << run.err;
}

TEST(DiscoveryErrors, GlobMatchingNothing) {
  Workdir dir;
  dir.write("ranktest.toml", "[[source]]\npaths = [\"build/*_test\"]\n");
  const auto run = run_ranktest(dir, {"run"});
  EXPECT_EQ(run.exit_code, 3);
  EXPECT_NE(run.err.find("ranktest.toml:1:1: "), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("build/*_test: the pattern matches no file"), std::string::npos)
      << run.err;
}

// A listing that hangs is killed after list-timeout, not after a test's
// timeout (5 minutes by default), and the error names the binary, the
// timeout and the setting to raise. A [[source]]'s list-timeout wins over
// the top-level one.
TEST(DiscoveryErrors, AListingThatHangsIsStoppedAtTheListTimeout) {
  Workdir dir;
  dir.write("ranktest.toml", "list-timeout = \"10m\"\n[[source]]\npaths = [\"" +
                                 fixture("hangs_on_list") + "\"]\nlist-timeout = \"1s\"\n");
  const auto started = std::chrono::steady_clock::now();
  const auto run = run_ranktest(dir, {"run"});
  const auto took = std::chrono::steady_clock::now() - started;
  EXPECT_EQ(run.exit_code, 3) << run.out << run.err;
  EXPECT_NE(run.err.find("fixture_hangs_on_list: still listing its tests (--gtest_list_tests) "
                         "after list-timeout = \"1s\", so it was killed; if it is only slow, "
                         "raise list-timeout in ranktest.toml"),
            std::string::npos)
      << run.err;
  EXPECT_NE(run.err.find("| waiting for the device service..."), std::string::npos) << run.err;
  EXPECT_LT(took, std::chrono::seconds(30));
  // Named on the command line, the binary gets the top-level list-timeout.
  dir.write("ranktest.toml", "list-timeout = 0.5\n");
  const auto named = run_ranktest(dir, {"list", fixture("hangs_on_list")});
  EXPECT_EQ(named.exit_code, 3) << named.err;
  EXPECT_NE(named.err.find("after list-timeout = \"500ms\""), std::string::npos) << named.err;
}

// A folder of binaries with one that is not a gtest (a benchmark, as in
// Debian's /usr/lib/libtorch-test/): one glob and one exclude.
TEST(DiscoverySources, ExcludeLeavesOutWhatAGlobMatches) {
  Workdir dir;
  std::filesystem::create_directories(dir.path() / "bin");
  std::filesystem::copy_file(fixture("flaky"), dir.path() / "bin" / "flaky_test");
  std::filesystem::copy_file(fixture("not_gtest"), dir.path() / "bin" / "intrusive_ptr_benchmark");
  dir.write("ranktest.toml", "[[source]]\npaths = [\"bin/*\"]\n");
  const auto all = run_ranktest(dir, {"list"});
  EXPECT_EQ(all.exit_code, 3) << "the benchmark is no gtest: " << all.out << all.err;
  EXPECT_NE(all.err.find("intrusive_ptr_benchmark"), std::string::npos) << all.err;
  for (const std::string exclude : {"*_benchmark", "bin/*_benchmark"}) {
    dir.write("ranktest.toml",
              "[[source]]\npaths = [\"bin/*\"]\nexclude = [\"" + exclude + "\"]\n");
    const auto run = run_ranktest(dir, {"run", "--filter", "*AlwaysPasses"});
    EXPECT_EQ(run.exit_code, 0) << exclude << ": " << run.out << run.err;
    EXPECT_EQ(run.finished().count("flaky_test::Flaky.AlwaysPasses"), 1u) << run.out;
  }
  // An exclude that leaves nothing of a pattern is a mistake, said as one.
  dir.write("ranktest.toml", "[[source]]\npaths = [\"bin/*\"]\nexclude = [\"*\"]\n");
  const auto none = run_ranktest(dir, {"list"});
  EXPECT_EQ(none.exit_code, 3) << none.out;
  EXPECT_NE(none.err.find("ranktest.toml:1:1: "), std::string::npos) << none.err;
  EXPECT_NE(none.err.find("bin/*: exclude leaves out every file it matches"), std::string::npos)
      << none.err;
}

// Beside a binary that passes, a binary that lists nothing would leave the
// run green while its failing test never ran.
TEST(DiscoveryErrors, ABinaryThatListsNothingIsAnError) {
  Workdir dir;
  const auto run = run_ranktest(dir, {"run", fixture("flaky"), fixture("lists_nothing")});
  EXPECT_EQ(run.exit_code, 3) << run.out << run.err;
  // Named on the command line, no ranktest.toml has its [[source]]: the
  // advice is the one to write.
  EXPECT_NE(run.err.find("fixture_lists_nothing: listed no tests (--gtest_list_tests); if that is "
                         "expected, no ranktest.toml names it: write one here holding [[source]] "
                         "kind = \"gtest\", paths = [\"" + fixture("lists_nothing") +
                         "\"], allow-empty = true"),
            std::string::npos)
      << run.err;
  EXPECT_EQ(run.out.find("passed"), std::string::npos) << "nothing ran";
  // Said to be allowed, it runs nothing and the others run.
  dir.write("ranktest.toml", "[[source]]\npaths = [\"" + fixture("lists_nothing") +
                                 "\"]\nallow-empty = true\n[[source]]\npaths = [\"" +
                                 fixture("flaky") + "\"]\n");
  const auto allowed = run_ranktest(dir, {"run", "--filter", "*AlwaysPasses"});
  EXPECT_EQ(allowed.exit_code, 0) << allowed.out << allowed.err;
  EXPECT_EQ(allowed.last_out_line(), "ranktest: 1 passed, 0 failed, 0 skipped");
}

// Each pytest path must collect a test: a second file whose test was
// renamed (check_* instead of test_*) does not vanish from a green run.
TEST(DiscoveryErrors, APytestPathThatCollectsNothingIsAnError) {
  Workdir dir;
  dir.write("tests/test_kept.py", "def test_kept():\n    pass\n");
  dir.write("tests/test_renamed.py", "def check_renamed():\n    assert False\n");
  dir.write("other/test_other.py", "def test_other():\n    pass\n");
  const auto source = [](const std::string& extra) {
    return "[[source]]\nkind = \"pytest\"\npython = \"/usr/bin/python3\"\n"
           "paths = [\"tests/test_kept.py\", \"tests/test_renamed.py\", \"other\"]\n" + extra;
  };
  dir.write("ranktest.toml", source(""));
  const auto run = run_ranktest(dir, {"run"});
  EXPECT_EQ(run.exit_code, 3) << run.out << run.err;
  EXPECT_NE(run.err.find("ranktest.toml:1:1: pytest collected no tests from tests/test_renamed.py; "
                         "if that is expected, set allow-empty = true"),
            std::string::npos) << run.err;
  EXPECT_EQ(run.out.find("passed"), std::string::npos) << "nothing ran";
  // Cached or not, the same.
  EXPECT_EQ(run_ranktest(dir, {"run"}).exit_code, 3);
  dir.write("ranktest.toml", source("allow-empty = true\n"));
  const auto allowed = run_ranktest(dir, {"run"});
  EXPECT_EQ(allowed.exit_code, 0) << allowed.out << allowed.err;
  EXPECT_EQ(allowed.last_out_line(), "ranktest: 2 passed, 0 failed, 0 skipped");
}

// A relative path in ranktest.toml names a file beside it: a program of
// the same name in PATH (here /usr/bin/true, which lists nothing) never runs.
TEST(DiscoveryErrors, ARelativeBinaryPathIsNeverLookedUpInPath) {
  Workdir dir;
  std::filesystem::copy_file(fixture("flaky"), dir.path() / "true");
  dir.write("ranktest.toml", "[[source]]\npaths = [\"true\"]\n");
  const auto run = run_ranktest(dir, {"run", "--filter", "*AlwaysPasses"});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_EQ(run.finished().count("true::Flaky.AlwaysPasses"), 1u) << run.out << run.err;
  // The test runs from another folder too (a source's cwd), still that file.
  dir.write("ranktest.toml", "[[source]]\npaths = [\"true\"]\ncwd = \"/\"\n");
  const auto elsewhere = run_ranktest(dir, {"run", "--filter", "*AlwaysPasses"});
  EXPECT_EQ(elsewhere.exit_code, 0) << elsewhere.out << elsewhere.err;
}

// Two sources that collect the same test would share its folder and log:
// a discovery error naming the test, not a run where one overwrites the other.
TEST(DiscoveryErrors, ATestCollectedByTwoSourcesIsAnError) {
  Workdir dir;
  dir.write("test_twice.py", "def test_once():\n    pass\n");
  const std::string source =
      "[[source]]\nkind = \"pytest\"\npython = \"/usr/bin/python3\"\npaths = [\"test_twice.py\"]\n";
  dir.write("ranktest.toml", source + source);
  const auto run = run_ranktest(dir, {"run"});
  EXPECT_EQ(run.exit_code, 3) << run.out << run.err;
  EXPECT_NE(run.err.find("test_twice.py::test_once is collected by two [[source]] tables"),
            std::string::npos) << run.err;
  dir.write("ranktest.toml", source);
  EXPECT_EQ(run_ranktest(dir, {"run"}).exit_code, 0);
}

// A binary's listing is kept: an unchanged binary is not run again to list
// it, a changed one is, and --recollect lists every binary afresh.
TEST(DiscoveryCache, AnUnchangedBinaryIsListedOnce) {
  Workdir dir;
  const auto script = [&](const std::string& tests) {
    dir.write("fake_test", "#!/bin/sh\necho listed >> listings\nprintf '" + tests + "'\n");
    std::filesystem::permissions(dir.path() / "fake_test",
                                 std::filesystem::perms::owner_all);
  };
  script("Suite.\\n  One\\n");
  dir.write("ranktest.toml", "[[source]]\npaths = [\"fake_test\"]\n");
  const auto count = [&] { return occurrences(read_file(dir.path() / "listings"), "listed"); };
  EXPECT_NE(run_ranktest(dir, {"list"}).out.find("fake_test::Suite.One"), std::string::npos);
  EXPECT_NE(run_ranktest(dir, {"list"}).out.find("fake_test::Suite.One"), std::string::npos);
  EXPECT_EQ(count(), 1u) << "the second listing came from the cache";
  script("Suite.\\n  One\\n  Two\\n");  // rebuilt: another size and time
  const auto changed = run_ranktest(dir, {"list"});
  EXPECT_NE(changed.out.find("fake_test::Suite.Two"), std::string::npos) << changed.out;
  EXPECT_EQ(count(), 2u);
  run_ranktest(dir, {"run", "--recollect", "--filter", "NoSuchTest"});
  EXPECT_EQ(count(), 3u);
}

}  // namespace
}  // namespace ranktest::testing
