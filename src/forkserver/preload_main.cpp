// libranktest-forkserver.so: a test binary as its own fork server
// (`mode = "fork-server"` for gtest sources).
//
// ranktest starts the binary once with this library in LD_PRELOAD and
// RANKTEST_FORK_SERVER=1. The library interposes the C library's program
// start (__libc_start_main): the binary's static initialisation runs as
// usual (registering every test), then, where `main` would be called, the
// process serves instead. Each request forks a fresh copy of that
// initialised image which then calls the real `main` with the test's own
// argv (--gtest_filter, --gtest_output), environment (ranks, devices),
// working directory, process group, cgroup, network namespace and log: a
// test per process, as in plain mode, without paying exec, dynamic linking
// and static initialisation per test.
//
// The protocol is the pytest plugin's fork server's, written down once in
// docs/fork-server.md: JSON requests on stdin, one reply each on fd 3. The
// guard refuses to fork while the process runs more than one thread or
// holds an accelerator device open: a forked child would inherit locks held by threads it does not have, or
// a device context that cannot survive a fork.
//
// Without RANKTEST_FORK_SERVER the library does nothing: `main` runs.
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "forkserver/fast_exit.h"
#include "forkserver/join_network.h"
#include "forkserver/sibling_fork.h"

namespace {

using Json = nlohmann::json;
using Main = int (*)(int, char**, char**);

Main g_main = nullptr;

constexpr int kReplies = 3;

bool write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

void reply(const Json& message) { write_all(kReplies, message.dump() + "\n"); }

// Why forking now would break the child, or nothing.
std::optional<std::string> guard_problem() {
  static const char* const kDevices[] = {"/dev/nvidia", "/dev/accel", "/dev/vfio/", "/dev/kfd",
                                         "/dev/dri/"};
  if (DIR* fds = ::opendir("/proc/self/fd")) {
    while (const dirent* entry = ::readdir(fds)) {
      char target[512] = {};
      const std::string link = std::string("/proc/self/fd/") + entry->d_name;
      if (::readlink(link.c_str(), target, sizeof target - 1) <= 0) continue;
      for (const char* device : kDevices)
        if (std::strncmp(target, device, std::strlen(device)) == 0) {
          ::closedir(fds);
          return std::string("it has ") + target +
                 " open: a device was initialised before main (in a static initialiser), the "
                 "cause of \"Cannot re-initialize CUDA in forked subprocess\"";
        }
    }
    ::closedir(fds);
  }
  int threads = 0;
  if (DIR* tasks = ::opendir("/proc/self/task")) {
    while (const dirent* entry = ::readdir(tasks))
      if (entry->d_name[0] != '.') ++threads;
    ::closedir(tasks);
  }
  if (threads > 1)
    return "it runs " + std::to_string(threads) +
           " threads before main (started by a static initialiser): forking would copy one of "
           "them and leave the others' locks held";
  return std::nullopt;
}

// One line from stdin, without stdio (whose buffer a fork would copy).
std::optional<std::string> read_request() {
  static std::string buffered;
  for (;;) {
    const auto newline = buffered.find('\n');
    if (newline != std::string::npos) {
      auto line = buffered.substr(0, newline);
      buffered.erase(0, newline + 1);
      return line;
    }
    char chunk[65536];
    const ssize_t n = ::read(0, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;  // the runner closed its end: done
    buffered.append(chunk, static_cast<std::size_t>(n));
  }
}

// "2f62696e" -> "/bin": the runner sends argv and environment hex-encoded,
// as they need not be UTF-8.
std::vector<std::string> unhex(const Json& list) {
  std::vector<std::string> out;
  if (!list.is_array()) return out;
  for (const auto& item : list) {
    if (!item.is_string()) continue;
    const auto& digits = item.get_ref<const std::string&>();
    std::string bytes;
    for (std::size_t i = 0; i + 1 < digits.size(); i += 2)
      bytes += static_cast<char>(std::stoi(digits.substr(i, 2), nullptr, 16));
    out.push_back(std::move(bytes));
  }
  return out;
}

// In the test's process: its group, cgroup, network, output, folder,
// environment.
void become_test(const Json& request) {
  const pid_t group = request.value("pgid", 0);
  ::setpgid(0, group);
  const auto list = [&](const char* key) {
    const auto it = request.find(key);
    return it == request.end() ? Json::array() : *it;
  };
  // The log first, so that a failure to join the cgroup is said there.
  const auto log = request.value("log", std::string());
  const int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (out >= 0) {
    ::dup2(out, 1);
    ::dup2(out, 2);
    ::close(out);
  }
  // Each line in the log once written: what the test printed last before
  // it crashed is not lost in a block buffer (the binary run alone into a
  // file loses it).
  std::setvbuf(stdout, nullptr, _IOLBF, BUFSIZ);
  // A test outside its cgroup would run without its limits and escape
  // its kill: it does not run (both fork servers end it the same way).
  for (const auto& procs : list("cgroups")) {
    if (!procs.is_string()) continue;
    const auto path = procs.get<std::string>();
    if (path == request.value("born_in", std::string())) continue;  // already in it
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0 || !write_all(fd, "0")) {
      std::fprintf(stderr, "ranktest fork server: cannot join the test's cgroup (%s): %s\n",
                   path.c_str(), std::strerror(errno));
      ::_exit(127);
    }
    ::close(fd);
  }
  // After the cgroup (a process in a user namespace may no longer write
  // it). A test meant to be isolated never runs on the host's network.
  const auto netns = request.value("netns", std::string());
  if (!netns.empty()) {
    const auto userns = request.value("userns", std::string());
    if (const int error = ranktest_join_network(netns.c_str(), userns.c_str())) {
      std::fprintf(stderr,
                   "ranktest fork server: cannot join the test's network namespace (%s): %s\n",
                   netns.c_str(), std::strerror(error));
      ::_exit(127);
    }
  }
  const int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null >= 0) {
    ::dup2(null, 0);
    ::close(null);
  }
  ::close(kReplies);
  ::clearenv();
  static std::vector<std::string> environment;  // putenv keeps pointers into it
  environment = unhex(request.value("env_hex", Json::array()));
  for (auto& entry : environment) ::putenv(entry.data());
  const auto cwd = request.value("cwd", std::string());
  if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) {
    std::fprintf(stderr, "ranktest fork server: cannot enter %s: %s\n", cwd.c_str(),
                 std::strerror(errno));
    ::_exit(127);
  }
}

// The request's cgroup v2 folder (the one of its cgroup.procs files whose
// folder has cgroup.controllers), open for the test to be born in, and
// that file in `procs`; -1 where it has none.
int v2_cgroup_of(const Json& request, std::string& procs) {
  const auto it = request.find("cgroups");
  if (it == request.end() || !it->is_array()) return -1;
  for (const auto& file : *it) {
    if (!file.is_string()) continue;
    const auto path = file.get<std::string>();
    const auto folder = path.substr(0, path.rfind('/'));
    if (::access((folder + "/cgroup.controllers").c_str(), F_OK) != 0) continue;
    procs = path;
    return ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  }
  return -1;
}

// Serves until the runner closes stdin (then exits), or returns the
// request a forked test process is to run.
Json serve() {
  ::unsetenv("LD_PRELOAD");
  ranktest::forkserver::prepare_exit();
  const auto problem = guard_problem();
  reply({{"ready", true}, {"guard", problem ? Json(*problem) : Json(nullptr)}});
  while (const auto line = read_request()) {
    Json request = Json::parse(*line, nullptr, false);
    if (request.is_discarded() || unhex(request.value("argv_hex", Json::array())).empty()) {
      reply({{"refused", "a request without argv"}});
      continue;
    }
    if (const auto why = guard_problem()) {
      reply({{"refused", *why}});
      continue;
    }
    // The test process is the runner's child from the start (the runner
    // reaps it and gets SIGCHLD, as for a spawned process), and the server
    // waits for nothing. No fork handlers run: safe because the guard just
    // saw a single thread, so no lock is held.
    std::string v2_procs;
    const int cgroup = v2_cgroup_of(request, v2_procs);
    int placed = 0;
    const pid_t child = ranktest_fork_as_sibling_into(cgroup, &placed);
    if (cgroup >= 0) ::close(cgroup);
    if (child == 0) {
      if (placed) request["born_in"] = v2_procs;
      return request;
    }
    if (child < 0) {
      reply({{"refused", std::string("fork failed: ") + std::strerror(errno)}});
      continue;
    }
    // Not ours to put in its group (only a parent may): the test joins it
    // itself, and ranktest puts it there on this reply.
    reply({{"pid", child}});
  }
  std::exit(0);
}

int serve_then_main(int argc, char** argv, char** envp) {
  if (!std::getenv("RANKTEST_FORK_SERVER")) return g_main(argc, argv, envp);
  const Json request = serve();
  ranktest::forkserver::begin_test(request.value("exit", std::string("fast")) != "full");
  become_test(request);
  // The test's argv lives as long as the process.
  static std::vector<std::string> arguments;
  static std::vector<char*> pointers;
  arguments = unhex(request["argv_hex"]);
  for (auto& argument : arguments) pointers.push_back(argument.data());
  pointers.push_back(nullptr);
  return ranktest::forkserver::end_test(
      g_main(static_cast<int>(arguments.size()), pointers.data(), environ));
}

}  // namespace

extern "C" int __libc_start_main(Main main, int argc, char** argv, void (*init)(void),
                                 void (*fini)(void), void (*rtld_fini)(void), void* stack_end) {
  using Start = int (*)(Main, int, char**, void (*)(void), void (*)(void), void (*)(void), void*);
  const auto real = reinterpret_cast<Start>(::dlsym(RTLD_NEXT, "__libc_start_main"));
  g_main = main;
  return real(serve_then_main, argc, argv, init, fini, rtld_fini, stack_end);
}
