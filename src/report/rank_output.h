// Showing the output of many ranks without repeating it many times.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ranktest::report {

// "0", "0-3", "0,2-3,7": a sorted set of ranks, runs collapsed.
std::string format_ranks(std::vector<int> ranks);

// Merges the outputs of several ranks line by line: where ranks printed the
// same text as their n-th line it is shown once, "[ranks 0-7] text"; where
// they differ, each rank's line is shown with its rank. A rank's output runs
// of one repeated line are folded first: "text  [×12]".
std::vector<std::string> merge_rank_outputs(
    const std::vector<std::pair<int, std::string_view>>& outputs);

// Folds consecutive repeats of a line into one, "text  [×N]".
std::vector<std::string> fold_repeats(const std::vector<std::string_view>& lines);

}  // namespace ranktest::report
