// Reading what launchers put in the environment: numbers, and Slurm's
// compressed host and task lists.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ranktest::launchers {

// A non-negative decimal that is the whole of `text`.
std::optional<int> whole_number(std::string_view text);

// The items of a comma-separated list, split only at commas outside
// `open` ... `close` ("node[1-2],gpu1" with brackets: node[1-2], gpu1);
// nothing when those do not pair up.
std::optional<std::vector<std::string_view>> split_outside(std::string_view list, char open,
                                                           char close);

// "3-5" -> 3, 5; "7" -> 7, 7. Nothing for anything else.
std::optional<std::pair<int, int>> number_range(std::string_view item);

// The first host of a Slurm host list: "node[07-09,12],gpu1" -> "node07".
std::string first_host_of(std::string_view host_list);

// Every host of a Slurm host list, in order: "node[07-09,12],gpu1" ->
// node07, node08, node09, node12, gpu1. Nothing when the list is not one
// (an unclosed bracket, a range that is not two numbers).
std::optional<std::vector<std::string>> hosts_of(std::string_view host_list);

// Tasks on node `node` from SLURM_STEP_TASKS_PER_NODE: "2(x3),1" lists
// 2, 2, 2, 1. Nothing when the text does not say.
std::optional<int> tasks_on_node(std::string_view tasks_per_node, int node);

}  // namespace ranktest::launchers
