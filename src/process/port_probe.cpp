#include "process/port_probe.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>

namespace ranktest::process {

bool tcp_port_is_free(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  const int yes = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  address.sin_port = htons(static_cast<uint16_t>(port));
  const bool free = bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
                    listen(fd, 1) == 0;
  close(fd);
  return free;
}

namespace {

bool usable_folder(const std::string& folder) {
  return access(folder.c_str(), W_OK | X_OK) == 0;
}

}  // namespace

PortLocks::PortLocks() {
  const char* base = std::getenv("TMPDIR");
  const std::string root = base && *base ? base : "/tmp";
  const std::string shared = root + "/ranktest-ports";
  // Shared by every user's runs, like /tmp: mkdir's mode is cut by the
  // umask, so the sticky, world-writable mode is set explicitly.
  if (mkdir(shared.c_str(), 01777) == 0) chmod(shared.c_str(), 01777);
  if (usable_folder(shared)) {
    folder_ = shared;
    return;
  }
  // Never silently unlocked: this user's runs still share locks, and the
  // person is told what other users' runs may do.
  const std::string own = fmt::format("{}/ranktest-ports-{}", root, getuid());
  mkdir(own.c_str(), 0700);
  if (usable_folder(own)) {
    folder_ = own;
    problem_ = fmt::format(
        "{} is not writable by this user, so ports are locked in {} instead: another user's "
        "ranktest on this machine may hand a test the same MASTER_PORT; make the folder "
        "shared with chmod 1777 {}",
        shared, own, shared);
  } else {
    problem_ = fmt::format(
        "neither {} nor {} can hold port locks: concurrent ranktest runs on this machine may "
        "hand tests the same MASTER_PORT; set TMPDIR to a writable folder",
        shared, own);
  }
}

PortLocks::~PortLocks() {
  for (const auto& [port, fd] : fds_) close(fd);
}

bool PortLocks::claim(int port) {
  int fd = -1;
  if (!folder_.empty()) {
    const std::string path = folder_ + "/" + std::to_string(port) + ".lock";
    // Made once, then reused by every run: only the one that makes it
    // widens its mode (the umask cut it; another user must open it too).
    fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) {
      fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
      if (fd >= 0) fchmod(fd, 0666);
    }
    // flock needs only a descriptor: a lock file another user made
    // read-only still locks.
    if (fd < 0) fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;  // a lock file this user cannot open: never guess
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
      close(fd);
      return false;  // another runner holds it
    }
  }
  if (!tcp_port_is_free(port)) {
    if (fd >= 0) close(fd);
    return false;
  }
  if (fd >= 0) fds_[port] = fd;
  return true;
}

void PortLocks::release(int port) {
  if (const auto it = fds_.find(port); it != fds_.end()) {
    close(it->second);
    fds_.erase(it);
  }
}

}  // namespace ranktest::process
