// How ranktest starts a GoogleTest binary and reads back its names, for
// listing and for running alike: below both the discover and the execute
// stage, so neither includes the other.
#pragma once

#include <string>
#include <vector>

namespace ranktest::framework {

// GTEST_* variables of the runner's environment that would change which
// tests a binary lists or runs (sharding, filters, repeats); they are removed
// from every gtest process ranktest starts.
const std::vector<std::string>& gtest_variables_to_remove();

// gtest (1.12 at least) writes every byte above 0x7F of a JSON string as its
// own \u00XX escape, so "é" (C3 A9) reads back as "Ã©" and an invalid byte
// FF as "ÿ". Turns such a decoded string back into the bytes gtest had;
// text with a code point above U+00FF was not written that way and is
// returned as it is. The result may be invalid UTF-8 (names are bytes).
std::string undo_gtest_byte_escapes(const std::string& text);

// The --gtest_filter pattern that selects the test named `name`. gtest's
// filter has no escapes: ':' separates patterns, '-' starts the excluded
// ones, '*' and '?' are wildcards. A name registered at run time
// (RegisterTest) may hold any of them, so each becomes '?', which matches
// the character itself. Such a pattern may also match a test whose name
// differs only there ("a-b" and "a_b"); that test then runs in the same
// process, and only the named test's result is read.
std::string gtest_filter_selecting(const std::string& name);

}  // namespace ranktest::framework
