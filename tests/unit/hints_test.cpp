#include "config/hints.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "config/config_loader.h"

namespace ranktest::config {
namespace {

TEST(Hints, TheBuiltInFileParsesAndCoversTheKnownRiddles) {
  const auto& hints = builtin_hints();
  for (const std::string match :
       {"Cannot replicate if number of devices", "No subgraph found for uid",
        "Cannot re-initialize CUDA in forked subprocess", "Address already in use", "EADDRINUSE",
        "Gloo connectFullMesh failed", "Watchdog caught collective operation timeout",
        "terminated with exit code", "ProcessExitedException", "error_file: <N/A>"}) {
    const auto it = std::find_if(hints.begin(), hints.end(),
                                 [&](const Hint& hint) { return hint.match == match; });
    ASSERT_NE(it, hints.end()) << match;
    EXPECT_FALSE(it->explanation.empty()) << match;
    EXPECT_FALSE(it->fix.empty()) << match;
  }
}

TEST(Hints, RanktestTomlAddsItsOwn) {
  auto config = parse_config(
      "[[hint]]\nmatch = \"FOO_TIMEOUT\"\nexplanation = \"the foo service is slow\"\n"
      "fix = \"raise FOO_TIMEOUT\"\n",
      "ranktest.toml", "/project");
  ASSERT_TRUE(config) << config.error().message;
  ASSERT_EQ(config->hints.size(), 1u);
  EXPECT_EQ(config->hints[0].match, "FOO_TIMEOUT");
  EXPECT_EQ(config->hints[0].fix, "raise FOO_TIMEOUT");
}

TEST(Hints, ABadHintNamesItsPlace) {
  auto config = parse_config("[[hint]]\nmatch = \"x\"\nexplain = \"y\"\n", "ranktest.toml", "/p");
  ASSERT_FALSE(config);
  EXPECT_EQ(config.error().message,
            "ranktest.toml:1:1: unknown key 'explain' in [[hint]]; known keys are: match, "
            "explanation, fix, when");
}

}  // namespace
}  // namespace ranktest::config
