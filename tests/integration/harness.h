// Runs the built ranktest the way a user does, in a fresh folder, and reads
// back what it printed and wrote.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ranktest::testing {

std::string fixture(const std::string& name);  // path of a fixture binary

struct Invocation {
  int exit_code = -1;
  std::string out;
  std::string err;
  std::filesystem::path workdir;  // where ranktest ran
  std::vector<std::string> out_lines() const;
  std::string last_out_line() const;
  // The events of the run (from <workdir>/.ranktest/runs/latest).
  std::vector<nlohmann::json> events() const;
  // test id -> its test-finished event
  std::map<std::string, nlohmann::json> finished() const;
  std::filesystem::path run_dir() const;
};

// A scratch folder that lives as long as the test.
class Workdir {
 public:
  Workdir();
  ~Workdir();
  const std::filesystem::path& path() const { return path_; }
  void write(const std::string& name, const std::string& content) const;

 private:
  std::filesystem::path path_;
};

// Runs `ranktest <args>` in `workdir`. With `signal` set, sends it to
// ranktest as soon as `ready` returns true (polled every 20 ms, for at most
// 60 s), so a test does not depend on how fast a loaded machine is.
Invocation run_ranktest(const Workdir& workdir,
                        const std::vector<std::string>& args, int signal = 0,
                        const std::function<bool()>& ready = {});

// The same, run by `wrapper` (`salloc --nodes=3 --`): wrapper... ranktest args...
Invocation run_ranktest_inside(const std::vector<std::string>& wrapper, const Workdir& workdir,
                               const std::vector<std::string>& args);

std::string read_file(const std::filesystem::path& path);

// How many times `what` occurs in `text`.
std::size_t occurrences(const std::string& text, const std::string& what);

// The pids of live (not zombie) processes whose environment says they were
// started by the run in `run_dir`: what a run left running.
std::vector<std::string> surviving_processes(const std::filesystem::path& run_dir);

// Runs a shell command, returning its exit status and output.
int shell(const std::string& command, std::string* output = nullptr);

}  // namespace ranktest::testing
