// Reading what a GoogleTest binary says about its tests.
#pragma once

#include <filesystem>
#include <functional>
#include <ios>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/expected.h"
#include "model/test_case.h"

namespace ranktest::discover {

struct ListedTest {
  std::string suite;  // "Inst/Suite", "Typed/0"
  std::string name;   // "Name", "Name/3"
  std::string type_param;
  std::string value_param;
  std::optional<SourceLocation> location;

  std::string full_name() const { return suite + "." + name; }
  // As gtest decides it: the suite or the test name matches "DISABLED_*" or
  // "*/DISABLED_*".
  bool disabled() const;
};

// Where a reader puts what it reads: each test as it is read, in listing
// order, so that a binary listing 100,000 tests is never held twice.
struct ListingSink {
  // How many tests the listing holds, when known before them (to reserve).
  std::function<void(std::size_t)> expect;
  std::function<void(ListedTest&&)> take;
};

// On an error, what the sink took before it is incomplete: discard it.

// Parses the text of `--gtest_list_tests`: suite lines ("Suite." optionally
// followed by "  # TypeParam = …"), then indented test lines ("  Name"
// optionally followed by "  # GetParam() = …"). The "Running main() from"
// line of gtest_main is allowed. Any other line is an error naming its line
// number and quoting it.
Expected<Done> read_listing_text(std::string_view text, const ListingSink& sink);

// Parses the JSON file that `--gtest_list_tests --gtest_output=json:FILE`
// writes (gtest 1.10 and later), which also gives each test's file:line.
Expected<Done> read_listing_json(std::string_view json, const ListingSink& sink);
// The same, from a file, from byte `from` on: a listing of 100,000 tests
// is read as it streams by, never held whole (unless it is not gtest's
// byte-escaped ASCII and must be repaired).
Expected<Done> read_listing_json_file(const std::filesystem::path& file, std::streamoff from,
                                      const ListingSink& sink);

// The same, collected.
Expected<std::vector<ListedTest>> parse_listing_text(std::string_view text);
Expected<std::vector<ListedTest>> parse_listing_json(std::string_view json);


}  // namespace ranktest::discover
