// A plain test executable: what it does is its arguments' choice, so one
// binary serves every add_test of the example.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>

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
  if (what == "expect-cwd-file" && argc > 2) return std::filesystem::exists(argv[2]) ? 0 : 1;
  std::fprintf(stderr, "usage: %s pass|fail|abort|exit N|sleep S|expect-env NAME VALUE|expect-cwd-file F\n",
               argv[0]);
  return 2;
}
