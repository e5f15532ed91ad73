#include "app/invocation.h"

#include <filesystem>

namespace ranktest::app {
namespace {

std::string absolute_path(const std::filesystem::path& path) {
  return std::filesystem::absolute(path).lexically_normal().string();
}

}  // namespace

events::Invocation invocation_of(const CommandLine& cli) {
  events::Invocation invocation;
  if (cli.config_path) invocation.config_file = absolute_path(*cli.config_path);
  else if (std::filesystem::exists("ranktest.toml")) invocation.config_file = absolute_path("ranktest.toml");
  for (const auto& path : cli.binaries) invocation.paths.push_back(absolute_path(path));
  invocation.working_directory = std::filesystem::current_path().string();
  if (cli.state_dir) invocation.state_dir = absolute_path(*cli.state_dir);
  invocation.jobs = cli.jobs;
  if (cli.timeout) invocation.timeout_ms = cli.timeout->count();
  invocation.retries = cli.retries;
  invocation.fail_fast = cli.fail_fast;
  invocation.audit_children = cli.audit_children;
  invocation.recollect = cli.recollect;
  invocation.allocation = cli.allocation;
  invocation.markers = cli.pytest_markers;
  invocation.keyword = cli.pytest_keyword;
  return invocation;
}

void apply_invocation(const events::Invocation& invocation, CommandLine& cli) {
  if (!cli.config_path && invocation.config_file) cli.config_path = *invocation.config_file;
  cli.binaries = invocation.paths;
  if (!cli.state_dir && invocation.state_dir) cli.state_dir = *invocation.state_dir;
  if (!cli.jobs) cli.jobs = invocation.jobs;
  if (!cli.timeout && invocation.timeout_ms)
    cli.timeout = config::Duration(*invocation.timeout_ms);
  if (!cli.retries) cli.retries = invocation.retries;
  cli.fail_fast = cli.fail_fast || invocation.fail_fast;
  cli.audit_children = cli.audit_children || invocation.audit_children;
  cli.recollect = cli.recollect || invocation.recollect;
  if (!cli.allocation) cli.allocation = invocation.allocation;
  cli.pytest_markers = invocation.markers;
  cli.pytest_keyword = invocation.keyword;
}

}  // namespace ranktest::app
