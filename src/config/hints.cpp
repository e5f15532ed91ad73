#include "config/hints.h"

#include <fmt/format.h>

#include <toml++/toml.h>

namespace ranktest::config {

extern const char* const kBuiltinHintsToml;

Expected<std::vector<Hint>> parse_hints(std::string_view toml, const std::string& file_name) {
  toml::table document;
  try {
    document = toml::parse(toml, file_name);
  } catch (const toml::parse_error& error) {
    return Error{fmt::format("{}:{}:{}: {}", file_name, error.source().begin.line,
                             error.source().begin.column, error.description())};
  }
  std::vector<Hint> hints;
  const auto* tables = document.get_as<toml::array>("hint");
  if (!tables) return hints;
  for (const auto& node : *tables) {
    const auto* table = node.as_table();
    const auto place = fmt::format("{}:{}:{}", file_name, node.source().begin.line,
                                   node.source().begin.column);
    if (!table) return Error{place + ": [[hint]] must be a table"};
    Hint hint;
    for (const auto& [key, value] : *table) {
      if (key == "when") {
        const auto text = value.value<std::string>();
        if (!text || (*text != "any" && *text != "failure" && *text != "pass"))
          return Error{fmt::format("{}: key 'when' in [[hint]] must be \"any\", \"failure\" or "
                                   "\"pass\"",
                                   place)};
        hint.when = *text == "failure" ? Hint::When::failure
                    : *text == "pass"  ? Hint::When::pass
                                       : Hint::When::any;
        continue;
      }
      std::string* target = key == "match"         ? &hint.match
                            : key == "explanation" ? &hint.explanation
                            : key == "fix"         ? &hint.fix
                                                   : nullptr;
      if (!target)
        return Error{fmt::format("{}: unknown key '{}' in [[hint]]; known keys are: match, "
                                 "explanation, fix, when",
                                 place, key.str())};
      if (!value.is_string())
        return Error{fmt::format("{}: key '{}' in [[hint]] must be a string", place, key.str())};
      *target = value.value<std::string>().value();
    }
    if (hint.match.empty() || hint.explanation.empty())
      return Error{place + ": [[hint]] needs 'match' and 'explanation' (and a 'fix')"};
    hints.push_back(std::move(hint));
  }
  return hints;
}

const std::vector<Hint>& builtin_hints() {
  static const std::vector<Hint> hints = [] {
    auto parsed = parse_hints(kBuiltinHintsToml, "data/hints.toml");
    return parsed ? *parsed : std::vector<Hint>{};  // a unit test keeps it parseable
  }();
  return hints;
}

}  // namespace ranktest::config
