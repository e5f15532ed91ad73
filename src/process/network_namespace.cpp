#include "process/network_namespace.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <system_error>
#include <thread>

namespace ranktest::process {
namespace {

// Brings `lo` of the calling thread's network namespace up: a new namespace
// has it, down. Only system calls: the user-namespace holder runs it
// between clone and _exit.
bool loopback_up() {
  const int sock = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (sock < 0) return false;
  ifreq request;
  for (std::size_t i = 0; i < sizeof request; ++i) reinterpret_cast<char*>(&request)[i] = 0;
  request.ifr_name[0] = 'l';
  request.ifr_name[1] = 'o';
  bool up = ::ioctl(sock, SIOCGIFFLAGS, &request) == 0;
  if (up) {
    request.ifr_flags = static_cast<short>(request.ifr_flags | IFF_UP);
    up = ::ioctl(sock, SIOCSIFFLAGS, &request) == 0;
  }
  const int error = errno;
  ::close(sock);
  errno = error;
  return up;
}

// What a step that failed leaves for the message.
struct Failure {
  const char* step = nullptr;
  int error = 0;
  std::string text() const { return fmt::format("{}: {}", step, std::strerror(error)); }
};

// The privileged way: a short-lived thread of the runner moves itself into
// a new namespace and opens it. The runner's own threads never leave theirs.
Expected<int> made_by_a_thread(int& error_code) {
  int fd = -1;
  Failure failure;
  try {
    std::thread([&] {
      if (::unshare(CLONE_NEWNET) != 0) {
        failure = {"unshare(CLONE_NEWNET)", errno};
        return;
      }
      if (!loopback_up()) {
        failure = {"bringing lo up", errno};
        return;
      }
      fd = ::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
      if (fd < 0) failure = {"opening /proc/thread-self/ns/net", errno};
    }).join();
  } catch (const std::system_error& error) {
    error_code = error.code().value();
    return Error{fmt::format("cannot start a thread: {}", error.what())};
  }
  error_code = failure.error;
  if (fd < 0) return Error{failure.text()};
  return fd;
}

bool write_file(const char* path, const char* text) {
  const int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const auto length = static_cast<ssize_t>(std::strlen(text));
  const bool written = ::write(fd, text, static_cast<std::size_t>(length)) == length;
  const int error = errno;
  ::close(fd);
  errno = error;
  return written;
}

// The unprivileged way: a child cloned into a new user namespace (mapping
// the runner's uid and gid to themselves, so files a test writes are the
// user's own) and a new network namespace it owns. The runner opens both
// through /proc, then lets the child go: the descriptors keep them alive.
Expected<std::pair<int, int>> made_by_a_user_namespace() {
  char uid_map[64], gid_map[64];
  std::snprintf(uid_map, sizeof uid_map, "%u %u 1\n", ::geteuid(), ::geteuid());
  std::snprintf(gid_map, sizeof gid_map, "%u %u 1\n", ::getegid(), ::getegid());
  int ready[2], release[2];
  if (::pipe2(ready, O_CLOEXEC) != 0) return Error{std::strerror(errno)};
  if (::pipe2(release, O_CLOEXEC) != 0) {
    ::close(ready[0]);
    ::close(ready[1]);
    return Error{std::strerror(errno)};
  }
  // Blocked across the clone: no handler of the runner's runs in the child.
  sigset_t all, previous;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &previous);
  const long pid = ::syscall(SYS_clone, CLONE_NEWUSER | CLONE_NEWNET | SIGCHLD, nullptr, nullptr,
                             nullptr, nullptr);
  if (pid == 0) {
    // The child: only system calls from here to _exit.
    ::close(release[1]);
    Failure failed;
    if (!write_file("/proc/self/setgroups", "deny")) failed = {"writing /proc/self/setgroups", errno};
    else if (!write_file("/proc/self/gid_map", gid_map)) failed = {"writing /proc/self/gid_map", errno};
    else if (!write_file("/proc/self/uid_map", uid_map)) failed = {"writing /proc/self/uid_map", errno};
    else if (!loopback_up()) failed = {"bringing lo up", errno};
    if (failed.step) {
      [[maybe_unused]] const auto n = ::write(ready[1], &failed, sizeof failed);
      ::_exit(1);
    }
    [[maybe_unused]] const auto n = ::write(ready[1], "", 1);
    char byte;
    while (::read(release[0], &byte, 1) < 0 && errno == EINTR) {
    }
    ::_exit(0);
  }
  const int clone_error = errno;
  ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  ::close(ready[1]);
  ::close(release[0]);
  const auto finish = [&](pid_t child) {
    ::close(release[1]);  // the child exits on this
    ::close(ready[0]);
    int status;
    while (child > 0 && ::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
  };
  if (pid < 0) {
    finish(-1);
    return Error{Failure{"clone(CLONE_NEWUSER | CLONE_NEWNET)", clone_error}.text()};
  }
  Failure failed;
  ssize_t got;
  do got = ::read(ready[0], &failed, sizeof failed);
  while (got < 0 && errno == EINTR);
  if (got != 1) {
    finish(static_cast<pid_t>(pid));
    return Error{got == static_cast<ssize_t>(sizeof failed) ? failed.text()
                                                            : "the namespace's holder died"};
  }
  const auto user = fmt::format("/proc/{}/ns/user", pid);
  const auto net = fmt::format("/proc/{}/ns/net", pid);
  const int user_fd = ::open(user.c_str(), O_RDONLY | O_CLOEXEC);
  const int net_fd = ::open(net.c_str(), O_RDONLY | O_CLOEXEC);
  const int open_error = errno;
  finish(static_cast<pid_t>(pid));
  if (user_fd < 0 || net_fd < 0) {
    if (user_fd >= 0) ::close(user_fd);
    if (net_fd >= 0) ::close(net_fd);
    return Error{fmt::format("opening {}: {}", user_fd < 0 ? user : net, std::strerror(open_error))};
  }
  return std::pair{net_fd, user_fd};
}

// Which way works here, learnt from the first try: a runner that may not
// make namespaces itself does not ask again for every test.
enum class Way { untried, privileged, user_namespace };
std::atomic<Way> g_way{Way::untried};

}  // namespace

Expected<NetworkNamespace> NetworkNamespace::create() {
  std::string privileged_refusal;
  if (g_way != Way::user_namespace) {
    int error_code = 0;
    auto fd = made_by_a_thread(error_code);
    if (fd) {
      g_way = Way::privileged;
      return NetworkNamespace(*fd, -1);
    }
    // Only a refusal of the privilege sends us the other way; anything
    // else (out of memory, user.max_net_namespaces) is this test's error.
    if (g_way == Way::privileged || (error_code != EPERM && error_code != EACCES))
      return Error{fmt::format("cannot create a network namespace: {}", fd.error().message)};
    privileged_refusal = fd.error().message;
  }
  auto fds = made_by_a_user_namespace();
  if (fds) {
    g_way = Way::user_namespace;
    return NetworkNamespace(fds->first, fds->second);
  }
  if (privileged_refusal.empty())
    return Error{fmt::format("cannot create a network namespace: {}", fds.error().message)};
  return Error{fmt::format(
      "cannot create a network namespace: {} (no CAP_SYS_ADMIN), nor in a user namespace: {} "
      "(see sysctl user.max_user_namespaces, kernel.unprivileged_userns_clone, AppArmor); run "
      "ranktest as root",
      privileged_refusal, fds.error().message)};
}

NetworkNamespace::NetworkNamespace(NetworkNamespace&& other) noexcept
    : net_fd_(other.net_fd_), user_fd_(other.user_fd_) {
  other.net_fd_ = other.user_fd_ = -1;
}

NetworkNamespace& NetworkNamespace::operator=(NetworkNamespace&& other) noexcept {
  if (this != &other) {
    close();
    net_fd_ = other.net_fd_;
    user_fd_ = other.user_fd_;
    other.net_fd_ = other.user_fd_ = -1;
  }
  return *this;
}

NetworkNamespace::~NetworkNamespace() { close(); }

void NetworkNamespace::close() {
  if (net_fd_ >= 0) ::close(net_fd_);
  if (user_fd_ >= 0) ::close(user_fd_);
  net_fd_ = user_fd_ = -1;
}

std::string NetworkNamespace::net_path() const {
  return fmt::format("/proc/{}/fd/{}", ::getpid(), net_fd_);
}

std::string NetworkNamespace::user_path() const {
  return user_fd_ < 0 ? std::string() : fmt::format("/proc/{}/fd/{}", ::getpid(), user_fd_);
}

bool join_network_namespace(int net_fd, int user_fd) {
  if (user_fd >= 0 && ::setns(user_fd, CLONE_NEWUSER) != 0) return false;
  return ::setns(net_fd, CLONE_NEWNET) == 0;
}

}  // namespace ranktest::process
