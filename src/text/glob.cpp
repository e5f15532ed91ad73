#include "text/glob.h"

#include <fnmatch.h>

namespace ranktest::text {

bool glob_match(const std::string& pattern, const std::string& text) {
  return fnmatch(pattern.c_str(), text.c_str(), 0) == 0;
}

bool has_glob_characters(std::string_view pattern) {
  return pattern.find_first_of("*?[") != std::string_view::npos;
}

}  // namespace ranktest::text
