#include "select/test_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "frameworks/framework_kind.h"
#include "launchers/launcher_kind.h"
#include "select/test_order.h"
#include "text/glob.h"

namespace ranktest::select {

bool ResolvedSettings::ranks_run_here() const {
  const auto* kind = launchers::launcher_kind(launcher);
  return !kind || !kind->cluster_places_ranks();
}

bool glob_matches_test(const std::string& glob, const TestCase& test) {
  return text::glob_match(glob, test.id) || text::glob_match(glob, std::string(test.name()));
}

bool selection_matches(const Selection& selection, const TestCase& test) {
  if (selection.empty()) return true;
  for (const auto& glob : selection.globs)
    if (glob_matches_test(glob, test)) return true;
  for (const auto& name : selection.exact)
    if (name == test.id || name == test.name()) return true;
  return false;
}

ResolvedSettings resolve_settings(const config::Config& config,
                                  const TestCase& test) {
  // Per setting, the first matching override that sets it wins.
  config::TestSettings chosen;
  const auto take = [](auto& into, const auto& from) {
    if (!into && from) into = from;
  };
  for (const auto& entry : config.overrides) {
    if (!glob_matches_test(entry.filter, test)) continue;
    take(chosen.timeout, entry.settings.timeout);
    take(chosen.slow, entry.settings.slow);
    take(chosen.start_timeout, entry.settings.start_timeout);
    take(chosen.ranks, entry.settings.ranks);
    take(chosen.devices, entry.settings.devices);
    take(chosen.exclusive, entry.settings.exclusive);
    take(chosen.labels, entry.settings.labels);
    take(chosen.leak_is_failure, entry.settings.leak_is_failure);
    take(chosen.audit_children, entry.settings.audit_children);
    take(chosen.watch_workers, entry.settings.watch_workers);
    take(chosen.worker_isolation, entry.settings.worker_isolation);
    take(chosen.max_processes, entry.settings.max_processes);
    take(chosen.max_memory, entry.settings.max_memory);
    take(chosen.retries, entry.settings.retries);
    take(chosen.retry_delay, entry.settings.retry_delay);
    take(chosen.launcher, entry.settings.launcher);
    take(chosen.nodes, entry.settings.nodes);
    take(chosen.network, entry.settings.network);
    take(chosen.private_tmpdir, entry.settings.private_tmpdir);
  }
  // Then what the test declares in its own source.
  const auto& declared = test.detail().declared;
  take(chosen.ranks, declared.ranks);
  take(chosen.devices, declared.devices);
  take(chosen.exclusive, declared.exclusive);
  take(chosen.labels, declared.labels);
  if (!chosen.timeout && declared.timeout) chosen.timeout = *declared.timeout;
  take(chosen.retries, declared.retries);
  take(chosen.worker_isolation, declared.worker_isolation);
  if (!chosen.retry_delay && declared.retry_delay) chosen.retry_delay = *declared.retry_delay;
  take(chosen.audit_children, config.defaults.audit_children);
  take(chosen.watch_workers, config.defaults.watch_workers);
  take(chosen.worker_isolation, test.source->worker_isolation);  // the source's
  take(chosen.worker_isolation, config.defaults.worker_isolation);
  take(chosen.max_processes, config.defaults.max_processes);
  take(chosen.max_memory, config.defaults.max_memory);
  take(chosen.retries, config.defaults.retries);
  take(chosen.retry_delay, config.defaults.retry_delay);
  take(chosen.launcher, test.source->launcher);  // the source's
  take(chosen.launcher, config.defaults.launcher);
  take(chosen.nodes, config.defaults.nodes);
  take(chosen.network, test.source->network);
  take(chosen.network, config.defaults.network);
  take(chosen.private_tmpdir, test.source->private_tmpdir);
  take(chosen.private_tmpdir, config.defaults.private_tmpdir);
  ResolvedSettings settings;
  settings.timeout = chosen.timeout.value_or(config.timeout);
  settings.slow = chosen.slow.value_or(config.slow);
  settings.start_timeout = chosen.start_timeout.value_or(config.start_timeout);
  settings.ranks = chosen.ranks.value_or(1);
  settings.slots = std::max(1, declared.slots.value_or(1));
  settings.devices = chosen.devices.value_or(std::map<std::string, int>{});
  settings.exclusive = chosen.exclusive.value_or(false);
  settings.labels = chosen.labels.value_or(std::vector<std::string>{});
  settings.leak_is_failure = chosen.leak_is_failure.value_or(true);
  settings.audit_children = chosen.audit_children.value_or(false);
  settings.watch_workers = chosen.watch_workers.value_or(true);
  // Unless asked otherwise, a test of a framework that defaults to it
  // (pytest) runs in a worker process that runs test after test while each
  // passes (xdist's speed on suites of quick tests: docs/benchmarks.md),
  // unless it holds devices: a device's state (CUDA initialised) must not
  // carry over to the next test. Tests with ranks, an audit, a network
  // namespace or a launcher always get processes of their own
  // (may_run_in_worker).
  settings.worker_isolation = chosen.worker_isolation.value_or(
      frameworks::framework_of(test.source->kind).worker_isolation_by_default() &&
      settings.devices.empty());
  settings.max_processes = chosen.max_processes;
  settings.max_memory = chosen.max_memory;
  settings.retries = chosen.retries.value_or(0);
  settings.retry_delay = chosen.retry_delay.value_or(config::Duration{0});
  settings.launcher = chosen.launcher.value_or(Launcher::local);
  // Inside a Slurm allocation of several nodes every test is a job step
  // on a node the scheduler chose (docs/launchers.md): its devices are
  // that node's GRES.
  if (config.allocation && settings.launcher == Launcher::local) {
    settings.launcher = Launcher::slurm;
    settings.job_step = true;
  }
  settings.ranked = chosen.ranks.has_value();
  settings.nodes = chosen.nodes.value_or(0);
  settings.network = chosen.network.value_or(Network::host);
  settings.private_tmpdir = chosen.private_tmpdir.value_or(false);
  // The cluster grants such a launcher's devices (Slurm's GRES): not counted here.
  if (const auto* kind = launchers::launcher_kind(settings.launcher);
      kind && kind->cluster_places_ranks())
    std::swap(settings.devices, settings.cluster_devices);
  return settings;
}

// CTest's RESOURCE_GROUPS become devices: a whole device of the type for
// each requirement (never a share of one, whatever its slots), when the
// inventory has that type and no [[override]] gave the test devices. A
// type the inventory lacks is left out, as ctest leaves out every type
// without --resource-spec-file, and named in `absent`.
void add_resource_group_devices(const TestCase& test, const std::map<std::string, int>& capacity,
                                ResolvedSettings& settings,
                                std::map<std::string, std::vector<std::string>>& absent) {
  const auto& groups = test.detail().resource_groups;
  if (groups.empty()) return;
  std::map<std::string, int> needs;
  for (const auto& group : groups)
    for (const auto& requirement : group) {
      if (const auto it = capacity.find(requirement.type); it != capacity.end() && it->second > 0)
        ++needs[requirement.type];
      else if (absent[requirement.type].empty() || absent[requirement.type].back() != test.id)
        absent[requirement.type].push_back(test.id);
    }
  auto& devices = settings.ranks_run_here() ? settings.devices : settings.cluster_devices;
  if (devices.empty()) devices = std::move(needs);
}

namespace {

// Why `settings` can never be satisfied here, or nothing.
std::optional<std::string> unsatisfiable(const ResolvedSettings& settings,
                                         const std::map<std::string, int>& capacity) {
  for (const auto& [kind, count] : settings.devices) {
    const auto it = capacity.find(kind);
    const int have = it == capacity.end() ? 0 : it->second;
    if (count > have)
      return fmt::format("needs {} {}, inventory has {}", count, kind, have);
  }
  return std::nullopt;
}

std::string absent_resource_warning(const std::string& type, const std::vector<std::string>& tests) {
  return fmt::format(
      "CTest resource type \"{}\" is not among ranktest's devices, so {} test{} (e.g. {}) "
      "run{} without it, as ctest does without --resource-spec-file; name its ids in "
      "[devices] ({} = [\"0\", \"1\"]) to hand each test its own",
      type, tests.size(), tests.size() == 1 ? "" : "s", tests.front(),
      tests.size() == 1 ? "s" : "", type);
}

}  // namespace

TestPlan plan_tests(std::vector<TestCase> tests,
                    const Selection& selection, const config::Config& config,
                    const std::map<std::string, int>& capacity) {
  TestPlan plan;
  plan.tests = std::move(tests);
  // Most tests run: one allocation, not a doubling vector's copies.
  plan.to_run.reserve(plan.tests.size());
  // Settings already given to a test, to share: a run has few distinct
  // ones. Only the latest are compared, so that a suite whose every test
  // declares its own settings costs a copy each, not a quadratic search.
  constexpr std::size_t kCompared = 32;
  std::vector<std::shared_ptr<const ResolvedSettings>> distinct;
  const auto shared = [&](ResolvedSettings settings) {
    const std::size_t compared = std::min(distinct.size(), kCompared);
    for (auto it = distinct.rbegin(); it != distinct.rbegin() + compared; ++it)
      if (**it == settings) return *it;
    distinct.push_back(std::make_shared<const ResolvedSettings>(std::move(settings)));
    return distinct.back();
  };
  std::map<std::string, std::vector<std::string>> absent_resources;  // type -> tests
  // What the selection names, and the setup and cleanup tests of the
  // fixtures those require (ctest adds them too).
  std::vector<bool> selected(plan.tests.size());
  for (std::size_t i = 0; i < plan.tests.size(); ++i)
    selected[i] = selection_matches(selection, plan.tests[i]);
  if (!selection.empty()) add_fixture_tests(plan.tests, selected);
  for (std::size_t i = 0; i < plan.tests.size(); ++i) {
    const auto& test = plan.tests[i];
    if (!selected[i]) {
      ++plan.filtered_out;
    } else if (test.skip_reason()) {
      plan.to_skip.push_back(&test);
    } else {
      auto settings = resolve_settings(config, test);
      add_resource_group_devices(test, capacity, settings, absent_resources);
      if (auto why = unsatisfiable(settings, capacity))
        plan.cannot_run.push_back(NotRunnable{&test, *why});
      else
        plan.to_run.push_back(PlannedTest{&test, shared(std::move(settings))});
    }
  }
  for (const auto& [type, tests] : absent_resources)
    plan.warnings.push_back(absent_resource_warning(type, tests));
  return plan;
}

std::optional<std::string> network_conflict(const TestPlan& plan) {
  for (const auto& planned : plan.to_run) {
    const auto& settings = *planned.settings;
    if (settings.network == Network::isolated && settings.job_step)
      return fmt::format(
          "test {} has network = \"isolated\", and inside a Slurm allocation of several nodes "
          "every test runs as a job step, whose network ranktest cannot isolate; set network = "
          "\"host\" for it in an [[override]], or run with --allocation off (see "
          "docs/launchers.md)",
          planned.test->id);
    if (settings.network == Network::isolated && settings.launcher != Launcher::local)
      return fmt::format(
          "test {} has network = \"isolated\" and launcher = \"{}\": ranks that {} starts "
          "cannot share one network namespace (they may span nodes); set network = \"host\" "
          "for it in an [[override]], or launcher = \"local\" (see docs/configuration.md)",
          planned.test->id, config::launcher_name(settings.launcher),
          launchers::launcher_kind(settings.launcher)->default_command());
  }
  return std::nullopt;
}

std::size_t fall_back_to_host_network(TestPlan& plan) {
  std::size_t moved = 0;
  // Tests that shared settings still do.
  std::map<const ResolvedSettings*, std::shared_ptr<const ResolvedSettings>> on_host;
  for (auto& planned : plan.to_run) {
    if (planned.settings->network != Network::isolated) continue;
    auto& replacement = on_host[planned.settings.get()];
    if (!replacement) {
      auto settings = *planned.settings;
      settings.network = Network::host;
      replacement = std::make_shared<const ResolvedSettings>(std::move(settings));
    }
    planned.settings = replacement;
    ++moved;
  }
  return moved;
}

void order_longest_first(std::vector<PlannedTest>& tests,
                         const std::map<std::string, config::Duration>& expected) {
  const auto key = [&](const PlannedTest& test) {
    const auto it = expected.find(test.test->id);
    return it == expected.end() ? config::Duration::max() : it->second;
  };
  std::stable_sort(tests.begin(), tests.end(), [&](const auto& a, const auto& b) {
    return key(a) > key(b);
  });
}

bool may_run_in_worker(const PlannedTest& test) {
  const auto& settings = *test.settings;
  const auto& source = *test.test->source;
  const bool kind = frameworks::framework_of(source.kind).worker_style(source) !=
                    frameworks::WorkerStyle::none;
  return settings.worker_isolation && kind && settings.ranks == 1 && !settings.ranked &&
         !settings.audit_children && settings.network == Network::host &&
         settings.launcher == Launcher::local && !test.fresh_process;
}

}  // namespace ranktest::select
