// What ranktest does per test or per byte of output, measured alone:
// parsing a large listing, and making captured output safe for reports.
#include <benchmark/benchmark.h>

#include <string>

#include "frameworks/gtest/gtest_listing.h"
#include "process/network_namespace.h"
#include "text/sanitize.h"

namespace {

std::string make_listing(int suites, int tests_per_suite) {
  std::string text = "Running main() from gtest_main.cc\n";
  for (int s = 0; s < suites; ++s) {
    text += "Inst/Suite" + std::to_string(s) + ".\n";
    for (int t = 0; t < tests_per_suite; ++t)
      text += "  Case/" + std::to_string(t) + "  # GetParam() = " + std::to_string(t) + "\n";
  }
  return text;
}

void BM_ParseListing(benchmark::State& state) {
  const auto listing = make_listing(static_cast<int>(state.range(0)) / 100, 100);
  for (auto _ : state) {
    auto tests = ranktest::discover::parse_listing_text(listing);
    benchmark::DoNotOptimize(tests);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_ParseListing)->Arg(1'000)->Arg(100'000);

void BM_XmlSafeOutput(benchmark::State& state) {
  std::string output;
  while (output.size() < 1 << 20) output += "[ RUN      ] Suite.Case caf\xc3\xa9 \xff\x1b[0m\n";
  for (auto _ : state) {
    auto safe = ranktest::text::xml_safe(output);
    benchmark::DoNotOptimize(safe);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(output.size()));
}
BENCHMARK(BM_XmlSafeOutput);

}  // namespace

// network = "isolated": what the runner's own loop pays per test to make a
// namespace with lo up and to close it (the kernel frees it later, off
// the runner's thread).
void BM_NetworkNamespace(benchmark::State& state) {
  for (auto _ : state) {
    auto network = ranktest::process::NetworkNamespace::create();
    if (!network) {
      state.SkipWithError(network.error().message.c_str());
      break;
    }
    benchmark::DoNotOptimize(network->net_fd());
  }
}
BENCHMARK(BM_NetworkNamespace)->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
