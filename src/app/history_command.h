#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "app/options.h"

namespace ranktest::app {

struct HistoryQuery {
  std::size_t slowest = 10;
  std::size_t flakiest = 10;
  std::optional<std::string> test;  // one test's record instead
  std::size_t window = 50;          // verdicts per test the figures cover
  bool json = false;
  // --html PATH: the page of the last `window` runs (history_page.h).
  std::optional<std::filesystem::path> html;
};

// `ranktest history`: the slowest and flakiest tests of the recorded runs,
// or one test's attempts, from the history database.
int history_command(const CommandLine& cli, const HistoryQuery& query);

}  // namespace ranktest::app
