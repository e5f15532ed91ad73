// A plain test executable: what it does is its arguments' choice, so one
// binary serves every add_test of the example.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cctype>
#include <set>
#include <filesystem>
#include <string>
#include <thread>

// CTest's resource allocation, as a test that uses it reads it: `count`
// groups, each holding one resource of `type` ("id:<id>,slots:<n>"), no id
// held twice.
int expect_resource_groups(const std::string& type, int count) {
  const char* groups = std::getenv("CTEST_RESOURCE_GROUP_COUNT");
  if (!groups || std::atoi(groups) != count) {
    std::printf("CTEST_RESOURCE_GROUP_COUNT=%s, expected %d (run with a resource spec)\n",
                groups ? groups : "(unset)", count);
    return 1;
  }
  std::string upper = type;
  for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  std::set<std::string> ids;
  for (int group = 0; group < count; ++group) {
    const std::string name = "CTEST_RESOURCE_GROUP_" + std::to_string(group);
    const char* types = std::getenv(name.c_str());
    const char* held = std::getenv((name + "_" + upper).c_str());
    std::printf("%s=%s %s_%s=%s\n", name.c_str(), types ? types : "(unset)", name.c_str(),
                upper.c_str(), held ? held : "(unset)");
    if (!types || types != type || !held || std::string(held).rfind("id:", 0) != 0) return 1;
    ids.insert(std::string(held).substr(3, std::string(held).find(',') - 3));
  }
  return static_cast<int>(ids.size()) == count ? 0 : 1;
}

int main(int argc, char** argv) {
  const std::string what = argc > 1 ? argv[1] : "";
  if (what == "pass") return 0;
  if (what == "fail") {
    std::puts("failing on purpose");
    return 1;
  }
  if (what == "abort") std::abort();
  if (what == "exit" && argc > 2) return std::atoi(argv[2]);
  if (what == "sleep" && argc > 2) {
    std::this_thread::sleep_for(std::chrono::seconds(std::atoi(argv[2])));
    return 0;
  }
  if (what == "expect-env" && argc > 3) {
    const char* value = std::getenv(argv[2]);
    std::printf("%s=%s\n", argv[2], value ? value : "(unset)");
    return value && std::strcmp(value, argv[3]) == 0 ? 0 : 1;
  }
  if (what == "expect-resource-groups" && argc > 3)
    return expect_resource_groups(argv[2], std::atoi(argv[3]));
  if (what == "expect-cwd-file" && argc > 2) return std::filesystem::exists(argv[2]) ? 0 : 1;
  // A fixture's state: made by its setup, read by its tests, removed by its
  // cleanup (which fails if there was nothing to remove).
  if (what == "make-file" && argc > 2) {
    std::FILE* file = std::fopen(argv[2], "w");
    return file && std::fclose(file) == 0 ? 0 : 1;
  }
  if (what == "remove-file" && argc > 2) return std::filesystem::remove(argv[2]) ? 0 : 1;
  std::fprintf(stderr,
               "usage: %s pass|fail|abort|exit N|sleep S|expect-env NAME VALUE|"
               "expect-resource-groups TYPE N|expect-cwd-file F|make-file F|remove-file F\n",
               argv[0]);
  return 2;
}
