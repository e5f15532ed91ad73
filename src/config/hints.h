// Known cryptic error messages and what to do about them: data/hints.toml,
// compiled in, plus the [[hint]] tables of ranktest.toml.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "model/expected.h"

namespace ranktest::config {

struct Hint {
  std::string match;  // plain text that identifies the error
  std::string explanation;
  std::string fix;
};

// data/hints.toml, as built into this ranktest.
const std::vector<Hint>& builtin_hints();

// [[hint]] tables of a TOML document; errors name file:line:column.
Expected<std::vector<Hint>> parse_hints(std::string_view toml, const std::string& file_name);

}  // namespace ranktest::config
