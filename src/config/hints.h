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
  // Which tests it speaks to (`when`): any failure or suspicious pass, only
  // failures, or only suspicious passes (a line that means "swallowed" when
  // the test passed, and is the failure passed on when it failed).
  enum class When { any, failure, pass };
  When when = When::any;
};

// data/hints.toml, as built into this ranktest.
const std::vector<Hint>& builtin_hints();

// [[hint]] tables of a TOML document; errors name file:line:column.
Expected<std::vector<Hint>> parse_hints(std::string_view toml, const std::string& file_name);

}  // namespace ranktest::config
