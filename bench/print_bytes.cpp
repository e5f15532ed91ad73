// A gtest test that prints BENCH_OUTPUT_MIB mebibytes of text (default
// 2048) and passes: bench/big_output.sh runs it under ranktest to show the
// runner's memory stays bounded whatever a test prints.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

TEST(Output, PrintsManyMebibytes) {
  const char* set = std::getenv("BENCH_OUTPUT_MIB");
  const long mebibytes = set ? std::atol(set) : 2048;
  std::string line(1023, 'x');
  line += '\n';
  for (long i = 0; i < mebibytes * 1024; ++i) std::fwrite(line.data(), 1, line.size(), stdout);
}
