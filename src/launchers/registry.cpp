// The registry of launchers: what model/launcher_list.h lists.
#include "launchers/launcher_kind.h"

namespace ranktest::launchers {

const std::vector<const LauncherKind*>& launcher_kinds() {
  static const std::vector<const LauncherKind*> kinds{
#define RANKTEST_LAUNCHER(name) &name##_kind(),
#include "model/launcher_list.h"
#undef RANKTEST_LAUNCHER
  };
  return kinds;
}

const LauncherKind* launcher_kind(Launcher launcher) {
  for (const auto* kind : launcher_kinds())
    if (kind->id() == launcher) return kind;
  return nullptr;
}

std::string_view launcher_name(Launcher launcher) {
  const auto* kind = launcher_kind(launcher);
  return kind ? kind->name() : "local";
}

std::optional<Launcher> launcher_named(std::string_view name) {
  if (name == "local") return Launcher::local;
  for (const auto* kind : launcher_kinds())
    if (kind->name() == name) return kind->id();
  return std::nullopt;
}

std::map<Launcher, LauncherConfig> default_launcher_configs() {
  std::map<Launcher, LauncherConfig> configs;
  for (const auto* kind : launcher_kinds()) configs.emplace(kind->id(), kind->default_config());
  return configs;
}

}  // namespace ranktest::launchers
