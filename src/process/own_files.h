// Files installed beside the running ranktest binary (its helpers).
#pragma once

#include <filesystem>
#include <string_view>

namespace ranktest::process {

// <the folder of /proc/self/exe>/<name> (a build folder), else
// <that folder>/../libexec/ranktest/<name> (an installed ranktest); just
// <name> (looked up in PATH) when the running binary cannot be found.
std::filesystem::path beside_own_binary(std::string_view name);

}  // namespace ranktest::process
