// Fails the build when a folder of src/ includes a header of a folder its
// README.md does not let it include ("May include: a, b" or "nothing"):
// a dependency that runs back up is a design decision, said in that line,
// never an accident of one #include.
//
//   ranktest_layering_check SRC_DIR
//
// Prints each offending include as file:line: what to do, and exits 1.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

namespace fs = std::filesystem;

namespace {

// The folders a README.md's "May include:" line names; false where it has none.
bool allowed_folders(const fs::path& readme, std::set<std::string>& allowed) {
  std::ifstream in(readme);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("May include:", 0) != 0) continue;
    std::string names = line.substr(std::string("May include:").size());
    for (char& c : names)
      if (c == ',') c = ' ';
    std::istringstream words(names);
    for (std::string word; words >> word;)
      if (word != "nothing") allowed.insert(word);
    return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: ranktest_layering_check SRC_DIR\n");
    return 2;
  }
  const fs::path src = argv[1];
  std::set<std::string> folders;
  for (const auto& entry : fs::directory_iterator(src))
    if (entry.is_directory()) folders.insert(entry.path().filename().string());
  int problems = 0;
  const std::regex include(R"re(^\s*#\s*include\s+"([a-z_]+)/)re");
  for (const auto& folder : folders) {
    const auto readme = src / folder / "README.md";
    std::set<std::string> allowed;
    if (!allowed_folders(readme, allowed)) {
      std::fprintf(stderr,
                   "%s:1: error: no \"May include:\" line; say what src/%s/ owns and which "
                   "folders it may include (\"May include: model, text\" or \"nothing\")\n",
                   readme.c_str(), folder.c_str());
      ++problems;
      continue;
    }
    for (const auto& entry : fs::recursive_directory_iterator(src / folder)) {
      const auto extension = entry.path().extension().string();
      if (!entry.is_regular_file() || (extension != ".cpp" && extension != ".h" && extension != ".in"))
        continue;
      std::ifstream in(entry.path());
      int number = 0;
      std::smatch match;
      for (std::string line; std::getline(in, line);) {
        ++number;
        if (!std::regex_search(line, match, include)) continue;
        const std::string to = match[1];
        if (to == folder || !folders.count(to) || allowed.count(to)) continue;
        std::fprintf(stderr,
                     "%s:%d: error: src/%s/ includes %s/, which %s does not let it include; "
                     "include only what its \"May include:\" line names, or change that line "
                     "(a design decision: say why in that file)\n",
                     entry.path().c_str(), number, folder.c_str(), to.c_str(), readme.c_str());
        ++problems;
      }
    }
  }
  return problems == 0 ? 0 : 1;
}
