// What a launcher that started no rank said, cut to its reason, and the
// hint that says which [mpirun] args to add.
#include "execute/launcher_words.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "config/hints.h"

namespace ranktest::execute {
namespace {

// OpenMPI 4.1's words, as mpirun prints them.
constexpr std::string_view kAsRoot = R"(--------------------------------------------------------------------------
mpirun has detected an attempt to run as root.

Running as root is *strongly* discouraged as any mistake (e.g., in
defining TMPDIR) or bug can result in catastrophic damage to the OS
file system, leaving your system in an unusable state.

We strongly suggest that you run mpirun as a non-root user.

You can override this protection by adding the --allow-run-as-root option
to the cmd line or by setting two environment variables in the following way:
the variable OMPI_ALLOW_RUN_AS_ROOT=1 to indicate the desire to override this
protection, and OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 to confirm the choice and
add one more layer of certainty that you want to do so.
We reiterate our advice against doing so - please proceed at your own risk.
--------------------------------------------------------------------------
)";

constexpr std::string_view kSlots = R"(--------------------------------------------------------------------------
There are not enough slots available in the system to satisfy the 4
slots that were requested by the application:

  /usr/local/bin/ranktest-rank

Either request fewer slots for your application, or make more slots
available for use.

Alternatively, you can use the --oversubscribe option to ignore the
number of available slots when deciding the number of processes to
launch.
--------------------------------------------------------------------------
)";

// An internal failure: the generic paragraph, then what failed.
constexpr std::string_view kOrteInit = R"(--------------------------------------------------------------------------
It looks like orte_init failed for some reason; your parallel process is
likely to abort.  There are many reasons that a parallel process can
fail during orte_init; some of which are due to configuration or
environment problems.  This failure appears to be an internal failure;
here's some additional information (which may only be relevant to an
Open MPI developer):

  opal_pmix_base_select failed
  --> Returned value Not found (-13) instead of ORTE_SUCCESS
--------------------------------------------------------------------------
)";

// The hint ranktest shows for `said`, as the runner looks for them.
std::string fix_for(const std::string& said) {
  const auto& hints = config::builtin_hints();
  const auto it = std::find_if(hints.begin(), hints.end(), [&](const config::Hint& hint) {
    return said.find(hint.match) != std::string::npos;
  });
  return it == hints.end() ? std::string() : it->fix;
}

TEST(LauncherRefusal, OpenMpisReasonNotItsAdvice) {
  EXPECT_EQ(launcher_refusal(kAsRoot), "mpirun has detected an attempt to run as root.");
  EXPECT_EQ(launcher_refusal(kSlots),
            "There are not enough slots available in the system to satisfy the 4\n"
            "slots that were requested by the application:");
  // The last framed block is the refusal; what came before is not.
  EXPECT_EQ(launcher_refusal("a warning\n" + std::string(kSlots) + std::string(kAsRoot)),
            "mpirun has detected an attempt to run as root.");
}

TEST(LauncherRefusal, AnInternalFailureSaysWhatFailed) {
  EXPECT_EQ(launcher_refusal(kOrteInit),
            "It looks like orte_init failed for some reason; your parallel process is\n"
            "likely to abort.  There are many reasons that a parallel process can\n"
            "fail during orte_init; some of which are due to configuration or\n"
            "environment problems.  This failure appears to be an internal failure;\n"
            "here's some additional information (which may only be relevant to an\n"
            "opal_pmix_base_select failed\n"
            "--> Returned value Not found (-13) instead of ORTE_SUCCESS");
}

TEST(LauncherRefusal, AnythingElseIsItsLastLines) {
  EXPECT_EQ(launcher_refusal("srun: error: Unable to allocate resources\nsrun: fatal: no nodes\n"),
            "srun: error: Unable to allocate resources\nsrun: fatal: no nodes");
  EXPECT_EQ(launcher_refusal("1\n2\n3\n4\n5\n6\n7\n"), "3\n4\n5\n6\n7");
  EXPECT_EQ(launcher_refusal("\x1b[31mred\n"), "\\x1B[31mred");
  EXPECT_EQ(launcher_refusal(""), "");
}

TEST(LauncherRefusal, TheHintSaysWhichMpirunArgsToAdd) {
  EXPECT_NE(fix_for(launcher_refusal(kAsRoot)).find("[mpirun] args = [\"--allow-run-as-root\"]"),
            std::string::npos);
  EXPECT_NE(fix_for(launcher_refusal(kSlots)).find("[mpirun] args = [\"--oversubscribe\"]"),
            std::string::npos);
}

}  // namespace
}  // namespace ranktest::execute
