#include "execute/child_audit.h"

#include <gtest/gtest.h>
#include <signal.h>

namespace ranktest::execute {
namespace {

TEST(ChildAudit, ReadsEveryCompleteLineAndSkipsTornOnes) {
  const auto children = parse_child_audit(
      R"({"pid":12,"ppid":11,"command":"/usr/bin/python3 -c x","exec":true,"exit_code":3})" "\n"
      R"({"pid":13,"ppid":11,"command":"t","exec":false,"signal":11})" "\n"
      R"({"pid":14,"ppid":11,"comm)");
  ASSERT_EQ(children.size(), 2u);
  EXPECT_EQ(children[0].pid, 12);
  EXPECT_EQ(children[0].exit_code, 3);
  EXPECT_FALSE(children[0].signal);
  EXPECT_EQ(children[1].signal, SIGSEGV);
  EXPECT_FALSE(children[1].execd);
}

TEST(ChildAudit, FaultsAndNonZeroExitsCountTerminationSignalsDoNot) {
  const auto ended = [](std::optional<int> code, std::optional<int> signal) {
    return ended_badly(AuditedChild{1, 0, "x", true, code, signal});
  };
  EXPECT_FALSE(ended(0, std::nullopt));
  EXPECT_TRUE(ended(1, std::nullopt));
  EXPECT_TRUE(ended(17, std::nullopt));
  for (int sig : {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL}) EXPECT_TRUE(ended(std::nullopt, sig));
  for (int sig : {SIGTERM, SIGKILL, SIGINT, SIGHUP, SIGPIPE}) EXPECT_FALSE(ended(std::nullopt, sig));
}

TEST(ChildAudit, DescribesTheProgramByItsFileName) {
  EXPECT_EQ(describe(AuditedChild{12, 11, "/usr/bin/python3 worker.py --rank 1", true, 1, {}}),
            "child 12 (python3 worker.py --rank 1) exited with code 1");
  EXPECT_EQ(describe(AuditedChild{13, 11, "/bin/test", false, {}, SIGABRT}),
            "forked child 13 was killed by SIGABRT");
  const auto long_one = describe(AuditedChild{14, 11, "/x/y " + std::string(200, 'a'), true, 2, {}});
  EXPECT_LT(long_one.size(), 150u);
  EXPECT_NE(long_one.find("y aaa"), std::string::npos) << long_one;
  EXPECT_NE(long_one.find("…aaa"), std::string::npos) << long_one;
  // Its start and its end: a relaunched pytest's test id comes last.
  const auto pytest = describe(AuditedChild{
      15, 11, "/usr/bin/python3 -m pytest.__main__ -p ranktest_pytest.plugin -p no:cacheprovider "
              "-s --rootdir=/a/b tests/strategies/test_ddp_planted.py::test_ddp_planted_rank1",
      true, 1, {}});
  EXPECT_EQ(pytest, "child 15 (python3 -m pytest.__main__ -p ranktest_pytest.plugin -p no:c…"
                    "tegies/test_ddp_planted.py::test_ddp_planted_rank1) exited with code 1");
  // On one line, whatever `python -c` held.
  EXPECT_EQ(describe(AuditedChild{16, 11, "python3 -c \nimport os\n\tos._exit(3)", true, 3, {}}),
            "child 16 (python3 -c import os os._exit(3)) exited with code 3");
}

}  // namespace
}  // namespace ranktest::execute
