// The items of a list as a sentence names them: "a, b or c" (`last` is
// what goes before the last item; ", or " for "a, b, or c"). For messages
// that list the choices a registry holds.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ranktest::text {

inline std::string word_list(const std::vector<std::string>& items,
                             std::string_view last = " or ") {
  std::string text;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) text += i + 1 == items.size() ? last : std::string_view(", ");
    text += items[i];
  }
  return text;
}

}  // namespace ranktest::text
