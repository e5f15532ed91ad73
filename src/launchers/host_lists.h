// Reading what launchers put in the environment: numbers, and Slurm's
// compressed host and task lists.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ranktest::launchers {

// A non-negative decimal that is the whole of `text`.
std::optional<int> whole_number(std::string_view text);

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
