// Which interpreters on this machine could run a pytest source, for the
// error that says the configured one cannot.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "process/signal_watch.h"

namespace ranktest::discover {

// The python3 programs worth trying instead of `python`: each `python3` in
// the folders of `path_variable` (PATH), then /usr/bin/python3 and
// /usr/local/bin/python3, each once (by the file it resolves to), without
// `python` itself (a name is looked up in `path_variable`).
std::vector<std::filesystem::path> other_python3s(std::string_view path_variable,
                                                  const std::string& python);

// Those of other_python3s(PATH, python) that can `import pytest`, asked all
// at once, each for at most a few seconds.
std::vector<std::filesystem::path> python3s_with_pytest(const std::string& python,
                                                        process::SignalWatch& signals);

// What to do when the source's python has no pytest, given the interpreters
// on this machine that have it (`others`): " (... has no pytest; ...)".
std::string missing_pytest_advice(const config::SourceConfig& source,
                                  const std::vector<std::filesystem::path>& others);

}  // namespace ranktest::discover
