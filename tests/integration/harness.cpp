#include "harness.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace ranktest::testing {

std::string fixture(const std::string& name) {
  return std::string(FIXTURE_DIR) + "/fixture_" + name;
}

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t count = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++count;
  return count;
}

std::string read_file(const std::filesystem::path& path) {
  // Also reads /proc files of processes that may exit meanwhile, where
  // libstdc++'s filebuf throws on the failed read: an empty answer then.
  try {
    std::ifstream in(path, std::ios::binary);
    std::stringstream content;
    content << in.rdbuf();
    return content.str();
  } catch (const std::exception&) {
    return {};
  }
}

Workdir::Workdir() {
  std::string pattern = (std::filesystem::temp_directory_path() /
                         "ranktest-itest-XXXXXX").string();
  if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

Workdir::~Workdir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

void Workdir::write(const std::string& name, const std::string& content) const {
  std::filesystem::create_directories((path_ / name).parent_path());
  std::ofstream(path_ / name, std::ios::binary) << content;
}

namespace {

Invocation run_wrapped(const std::vector<std::string>& wrapper, const Workdir& workdir,
                       const std::vector<std::string>& args, int signal,
                       const std::function<bool()>& ready) {
  Invocation result;
  result.workdir = workdir.path();
  const auto out_path = workdir.path() / "ranktest.stdout";
  const auto err_path = workdir.path() / "ranktest.stderr";
  const pid_t pid = fork();
  if (pid == 0) {
    if (chdir(workdir.path().c_str()) != 0) _exit(126);
    const int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(out, 1);
    dup2(err, 2);
    // The suite may itself run under ranktest: start from a clean slate.
    unsetenv("RANKTEST_TEST_ID");
    std::vector<char*> argv;
    for (const auto& arg : wrapper) argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(const_cast<char*>(RANKTEST_BINARY));
    for (const auto& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    execvp(argv.front(), argv.data());
    _exit(127);
  }
  if (signal != 0) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (ready && !ready() && std::chrono::steady_clock::now() < give_up)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    kill(pid, signal);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = read_file(out_path);
  result.err = read_file(err_path);
  // Exit 4 is ranktest failing itself: whatever the test expected, show why.
  if (result.exit_code == 4)
    std::fprintf(stderr, "ranktest exited 4 (internal error); it printed on stderr:\n%s\n",
                 result.err.c_str());
  return result;
}

}  // namespace

Invocation run_ranktest(const Workdir& workdir, const std::vector<std::string>& args, int signal,
                        const std::function<bool()>& ready) {
  return run_wrapped({}, workdir, args, signal, ready);
}

Invocation run_ranktest_inside(const std::vector<std::string>& wrapper, const Workdir& workdir,
                               const std::vector<std::string>& args) {
  return run_wrapped(wrapper, workdir, args, 0, {});
}

std::vector<std::string> Invocation::out_lines() const {
  std::vector<std::string> lines;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string Invocation::last_out_line() const {
  const auto lines = out_lines();
  return lines.empty() ? std::string() : lines.back();
}

std::filesystem::path Invocation::run_dir() const {
  return std::filesystem::canonical(workdir / ".ranktest" / "runs" / "latest");
}

std::vector<nlohmann::json> Invocation::events() const {
  std::vector<nlohmann::json> events;
  std::istringstream in(read_file(run_dir() / "events.jsonl"));
  for (std::string line; std::getline(in, line);)
    events.push_back(nlohmann::json::parse(line));
  return events;
}

std::map<std::string, nlohmann::json> Invocation::finished() const {
  std::map<std::string, nlohmann::json> by_id;
  for (const auto& event : events())
    if (event["event"] == "test-finished") by_id[event["test"]["id"]] = event;
  return by_id;
}

std::vector<std::string> surviving_processes(const std::filesystem::path& run_dir) {
  const std::string marker = "RANKTEST_RUN_DIR=" + run_dir.string() + "\n";
  std::vector<std::string> found;
  DIR* proc = opendir("/proc");
  while (const auto* entry = proc ? readdir(proc) : nullptr) {
    const std::string pid = entry->d_name;
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string environ = read_file("/proc/" + pid + "/environ");
    for (auto& c : environ) if (c == '\0') c = '\n';
    const std::string stat = read_file("/proc/" + pid + "/stat");
    const auto close = stat.rfind(')');
    const bool zombie = close != std::string::npos && close + 2 < stat.size() &&
                        stat[close + 2] == 'Z';
    if (!zombie && environ.find(marker) != std::string::npos) found.push_back(pid);
  }
  if (proc) closedir(proc);
  return found;
}

int shell(const std::string& command, std::string* output) {
  const std::string full = command + " 2>&1";
  FILE* pipe = popen(full.c_str(), "r");
  if (!pipe) return -1;
  std::string text;
  char buffer[4096];
  while (const auto n = fread(buffer, 1, sizeof buffer, pipe)) text.append(buffer, n);
  const int status = pclose(pipe);
  if (output) *output = text;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace ranktest::testing
