#pragma once

#include <string>
#include <string_view>

namespace ranktest::text {

// Shell-style wildcard match where '*' also crosses '/' (test names such as
// "Inst/Suite.Name/3" contain slashes); '?' and '[...]' as in fnmatch(3).
bool glob_match(const std::string& pattern, const std::string& text);

bool has_glob_characters(std::string_view pattern);

}  // namespace ranktest::text
