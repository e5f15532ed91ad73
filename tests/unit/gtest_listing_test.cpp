#include "frameworks/gtest/gtest_listing.h"

#include "frameworks/gtest/gtest_discoverer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace ranktest::discover {
namespace {

TEST(ListingText, PlainTypedAndValueParameterised) {
  const auto listed = parse_listing_text(
      "Running main() from gtest_main.cc\n"
      "Math.\n"
      "  Adds\n"
      "  DISABLED_Broken\n"
      "Typed/0.  # TypeParam = int\n"
      "  Works\n"
      "Typed/1.  # TypeParam = std::pair<int, char>\n"
      "  Works\n"
      "Inst/Param.\n"
      "  Case/0  # GetParam() = \"a/b\"\n"
      "  Case/1  # GetParam() = (1, \"two  # three\")\n");
  ASSERT_TRUE(listed) << listed.error().message;
  ASSERT_EQ(listed->size(), 6u);
  EXPECT_EQ((*listed)[0].full_name(), "Math.Adds");
  EXPECT_FALSE((*listed)[0].disabled());
  EXPECT_TRUE((*listed)[1].disabled());
  EXPECT_EQ((*listed)[3].full_name(), "Typed/1.Works");
  EXPECT_EQ((*listed)[3].type_param, "std::pair<int, char>");
  EXPECT_EQ((*listed)[4].full_name(), "Inst/Param.Case/0");
  EXPECT_EQ((*listed)[4].value_param, "\"a/b\"");
  EXPECT_EQ((*listed)[5].value_param, "(1, \"two  # three\")");
}

TEST(ListingText, DisabledFollowsGtestsRule) {
  EXPECT_TRUE((ListedTest{"DISABLED_Suite", "Test", "", "", std::nullopt}).disabled());
  EXPECT_TRUE((ListedTest{"Inst/DISABLED_Suite", "Test", "", "", std::nullopt}).disabled());
  EXPECT_TRUE((ListedTest{"Suite", "DISABLED_Test", "", "", std::nullopt}).disabled());
  EXPECT_FALSE((ListedTest{"Suite", "Test_DISABLED_", "", "", std::nullopt}).disabled());
  EXPECT_FALSE((ListedTest{"NOT_DISABLED_Suite", "Test", "", "", std::nullopt}).disabled());
}

TEST(ListingText, EmptyListingIsNoTests) {
  const auto listed = parse_listing_text("");
  ASSERT_TRUE(listed);
  EXPECT_TRUE(listed->empty());
}

TEST(ListingText, RejectsWhatIsNotAListing) {
  auto listed = parse_listing_text("usage: tool [--verbose]\n");
  ASSERT_FALSE(listed);
  EXPECT_EQ(listed.error().message,
            "line 1 of the listing is neither \"Suite.\" nor an indented test "
            "name: \"usage: tool [--verbose]\"");
  listed = parse_listing_text("  Orphan\n");
  ASSERT_FALSE(listed);
  EXPECT_EQ(listed.error().message,
            "line 1 of the listing is a test outside any suite: \"  Orphan\"");
  listed = parse_listing_text("Loading.\nSuite.\n  Test\n");
  ASSERT_FALSE(listed);
  EXPECT_EQ(listed.error().message,
            "line 1 of the listing names a suite with no tests: \"Loading.\"");
}

TEST(ListingJson, ReadsNamesParamsAndLocations) {
  const auto listed = parse_listing_json(R"({"tests": 2, "testsuites": [
    {"name": "Inst/P", "tests": 1, "testsuite": [
      {"name": "Works/0", "value_param": "\"a/b\"", "file": "t.cpp", "line": 8}]},
    {"name": "Ty/0", "tests": 1, "testsuite": [
      {"name": "Ok", "type_param": "int", "file": "t.cpp", "line": 13}]}]})");
  ASSERT_TRUE(listed) << listed.error().message;
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ((*listed)[0].full_name(), "Inst/P.Works/0");
  EXPECT_EQ((*listed)[0].value_param, "\"a/b\"");
  ASSERT_TRUE((*listed)[0].location);
  EXPECT_EQ((*listed)[0].location->line, 8);
  EXPECT_EQ((*listed)[1].type_param, "int");
}

// A binary may list 100,000 tests: the reader hands each over as it reads
// it (the document is never held whole) and says first how many to expect.
TEST(ListingJson, HandsOverEachTestAndSaysHowManyFirst) {
  std::vector<std::string> events;
  const auto read = read_listing_json(
      R"({"tests": 3, "name": "AllTests", "testsuites": [
        {"name": "A", "tests": 2, "testsuite": [{"name": "One"}, {"name": "Two"}]},
        {"testsuite": [{"name": "Three", "file": "b.cpp", "line": 4}], "name": "B"}]})",
      ListingSink{[&](std::size_t count) { events.push_back("expect " + std::to_string(count)); },
                  [&](ListedTest&& test) { events.push_back(test.full_name()); }});
  ASSERT_TRUE(read) << read.error().message;
  // A suite's name may come after its tests.
  EXPECT_EQ(events, (std::vector<std::string>{"expect 3", "A.One", "A.Two", "B.Three"}));
  const auto unnamed = parse_listing_json(
      R"({"testsuites": [{"name": "A", "testsuite": [{"file": "a.cpp"}]}]})");
  ASSERT_FALSE(unnamed);
  EXPECT_EQ(unnamed.error().message, "the JSON listing has a test without a name in suite A");
}

TEST(ListingText, SaysHowManyToExpect) {
  std::size_t expected = 0, taken = 0;
  ASSERT_TRUE(read_listing_text("A.\n  One\n  Two\nB.\n  Three\n",
                                ListingSink{[&](std::size_t count) { expected = count; },
                                            [&](ListedTest&&) { ++taken; }}));
  EXPECT_EQ(expected, 3u);
  EXPECT_EQ(taken, 3u);
}

// A listing file (a cached one follows its key) is read from where the
// listing starts, as it streams by: gtest's escaped bytes become the name's
// bytes; a listing with raw bytes beyond ASCII is repaired as from memory.
TEST(ListingJson, ReadsAFileFromWhereTheListingStarts) {
  const auto file = std::filesystem::temp_directory_path() /
                    ("ranktest-listing-test-" + std::to_string(::getpid()) + ".json");
  const auto names_in = [&](const std::string& header, const std::string& json) {
    std::ofstream(file, std::ios::binary) << header << json;
    std::vector<std::string> names;
    const auto read = read_listing_json_file(
        file, static_cast<std::streamoff>(header.size()),
        ListingSink{{}, [&](ListedTest&& test) { names.push_back(test.full_name()); }});
    std::filesystem::remove(file);
    if (!read) return std::vector<std::string>{"error: " + read.error().message};
    return names;
  };
  const std::string escaped = R"({"testsuites": [{"name": "S", "testsuite": [{"name": "Caf\u00C3\u00A9"}]}]})";
  EXPECT_EQ(names_in("key\njson\n", escaped), std::vector<std::string>{"S.Caf\xC3\xA9"});
  EXPECT_EQ(names_in("", "{\"testsuites\": [{\"name\": \"S\", \"testsuite\": [{\"name\": \"Caf\xC3\xA9\"}]}]}"),
            std::vector<std::string>{"S.Caf\xC3\xA9"});
  // What comes before the listing says nothing of how it is written.
  EXPECT_EQ(names_in("\xFF\n", escaped), std::vector<std::string>{"S.Caf\xC3\xA9"});
  EXPECT_EQ(names_in("k\n", "{\"tests\": 1"),
            std::vector<std::string>{"error: the JSON listing is not a JSON object"});
  const auto missing = read_listing_json_file(file, 0, ListingSink{{}, [](ListedTest&&) {}});
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find(file.string()), std::string::npos);
}

// What a binary's listing makes of its tests: the id is the label and the
// name (the name a view of it), the tests of one file share the file's
// name (a binary of 1,000,000 tests in a few files holds a few copies),
// and a disabled test, parameters or not, is skipped as "disabled".
TEST(ListingJson, TestsOfOneFileShareItsName) {
  GtestBinary binary;
  binary.label = "bin";
  binary.executable = "/bin/true";
  std::vector<TestCase> tests;
  const auto read = read_listing_json(
      R"({"testsuites": [{"name": "S", "testsuite": [)"
      R"({"name": "A", "file": "/src/a.cpp", "line": 3},)"
      R"({"name": "DISABLED_B", "file": "/src/a.cpp", "line": 9},)"
      R"({"name": "C", "file": "/src/c.cpp", "line": 1},)"
      R"({"name": "D", "file": "/src/a.cpp", "line": 12, "value_param": "7"}]}]})",
      gtest_test_sink(binary, tests));
  ASSERT_TRUE(read) << read.error().message;
  ASSERT_EQ(tests.size(), 4u);
  EXPECT_EQ(tests[0].id, "bin::S.A");
  EXPECT_EQ(tests[0].name(), "S.A");
  EXPECT_EQ(tests[3].name(), "S.D");
  ASSERT_TRUE(tests[0].location());
  EXPECT_EQ(tests[0].location()->file, "/src/a.cpp");
  EXPECT_EQ(tests[1].location()->line, 9);
  EXPECT_EQ(tests[0].where.file.get(), tests[1].where.file.get());
  EXPECT_EQ(tests[0].where.file.get(), tests[3].where.file.get()) << "a.cpp again after c.cpp";
  EXPECT_NE(tests[0].where.file.get(), tests[2].where.file.get());
  EXPECT_FALSE(tests[0].skip_reason());
  EXPECT_EQ(tests[1].skip_reason().value_or(""), "disabled");
  EXPECT_EQ(tests[3].detail().value_param, "7");
  EXPECT_FALSE(tests[3].skip_reason());
}

TEST(ListingJson, RejectsOtherJson) {
  EXPECT_FALSE(parse_listing_json("not json"));
  EXPECT_FALSE(parse_listing_json("[]"));
  EXPECT_FALSE(parse_listing_json(R"({"testsuites": [{"name": "A"}]})"));
}

}  // namespace
}  // namespace ranktest::discover
