#include "process/port_probe.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <unistd.h>

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

PortLocks::PortLocks() {
  const char* base = std::getenv("TMPDIR");
  const std::string folder = std::string(base && *base ? base : "/tmp") + "/ranktest-ports";
  mkdir(folder.c_str(), 01777);  // shared by every user's runs, like /tmp
  if (access(folder.c_str(), W_OK) == 0) folder_ = folder;
}

PortLocks::~PortLocks() {
  for (const auto& [port, fd] : fds_) close(fd);
}

bool PortLocks::claim(int port) {
  int fd = -1;
  if (!folder_.empty()) {
    const std::string path = folder_ + "/" + std::to_string(port) + ".lock";
    fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) != 0) {
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
