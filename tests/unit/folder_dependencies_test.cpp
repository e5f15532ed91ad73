// src/'s folders depend on each other one way: a folder that includes a
// header of another, which includes one of it back, is a knot no reader can
// untie by reading one of them first. The knots still there are listed
// here, each to be undone (issue 47); a new one fails, and one undone must
// leave the list, so it stays the truth.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>

namespace ranktest {
namespace {

using Pair = std::pair<std::string, std::string>;

// Folder -> the folders its files include headers of.
std::map<std::string, std::set<std::string>> folder_includes() {
  const std::filesystem::path src = std::filesystem::path(RANKTEST_SOURCE_DIR) / "src";
  const std::regex include(R"re(^\s*#\s*include\s+"([a-z_]+)/)re");
  std::map<std::string, std::set<std::string>> edges;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(src)) {
    const auto extension = entry.path().extension().string();
    if (!entry.is_regular_file() || (extension != ".cpp" && extension != ".h")) continue;
    const auto relative = std::filesystem::relative(entry.path(), src);
    if (std::distance(relative.begin(), relative.end()) < 2) continue;  // main.cpp
    const std::string folder = relative.begin()->string();
    std::ifstream in(entry.path());
    std::smatch match;
    for (std::string line; std::getline(in, line);)
      if (std::regex_search(line, match, include) && match[1] != folder)
        edges[folder].insert(match[1]);
  }
  return edges;
}

TEST(FolderDependencies, NoTwoFoldersDependOnEachOtherBeyondTheKnownKnots) {
  const auto edges = folder_includes();
  EXPECT_GT(edges.size(), 10u);  // the walk found the folders
  std::set<Pair> two_way;
  for (const auto& [from, tos] : edges)
    for (const auto& to : tos)
      if (from < to && edges.count(to) && edges.at(to).count(from)) two_way.insert({from, to});
  // Undone so far: model <-> frameworks and model <-> launchers (the kind
  // lists moved to model/, 2026-12-07).
  const std::set<Pair> known{{"config", "frameworks"},
                             {"config", "launchers"},
                             {"execute", "frameworks"},
                             {"frameworks", "select"}};
  EXPECT_EQ(two_way, known) << "a new knot between two folders, or one undone (take it off the "
                               "list): each pair's files include headers of the other";
}

TEST(FolderDependencies, TheGroundFloorReachesUpNowhere) {
  // model/ and text/ are what everything stands on: they include nothing
  // of another folder but each other.
  const auto edges = folder_includes();
  for (const auto* floor : {"model", "text"}) {
    if (!edges.count(floor)) continue;
    for (const auto& to : edges.at(floor)) {
      EXPECT_TRUE(to == "model" || to == "text") << floor << "/ includes " << to << "/";
    }
  }
}

// The build runs tools/layering_check.cpp over src/: a folder that includes
// a header of a folder its README.md's "May include:" line does not name
// fails the build with the include's file:line, and a folder without that
// line fails it too.
TEST(FolderDependencies, TheBuildRefusesAnIncludeItsFolderDoesNotAllow) {
  const auto root = std::filesystem::temp_directory_path() /
                    ("ranktest-layering-" + std::to_string(::getpid()));
  std::filesystem::create_directories(root / "low");
  std::filesystem::create_directories(root / "high");
  const auto write = [&](const std::string& file, const std::string& text) {
    std::ofstream(root / file) << text;
  };
  write("low/README.md", "# low\n\nMay include: nothing\n");
  write("high/README.md", "# high\n\nMay include: low\n");
  write("low/a.h", "#pragma once\n#include <vector>\n");
  write("high/b.cpp", "#include \"low/a.h\"\n#include \"high/b.h\"\n");
  const auto check = [&](std::string& said) {
    const std::string command = std::string(RANKTEST_LAYERING_CHECK) + " " + root.string() + " 2>&1";
    std::FILE* out = ::popen(command.c_str(), "r");
    said.clear();
    char buffer[512];
    while (std::fgets(buffer, sizeof buffer, out)) said += buffer;
    const int status = ::pclose(out);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  std::string said;
  EXPECT_EQ(check(said), 0) << said;
  write("low/c.cpp", "#include <map>\n\n#include \"high/b.h\"\n");
  EXPECT_EQ(check(said), 1);
  EXPECT_NE(said.find("low/c.cpp:3: error: src/low/ includes high/"), std::string::npos) << said;
  std::filesystem::remove(root / "low/c.cpp");
  std::filesystem::create_directories(root / "bare");
  EXPECT_EQ(check(said), 1);
  EXPECT_NE(said.find("bare/README.md:1: error: no \"May include:\" line"), std::string::npos)
      << said;
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace ranktest
