#include "forkserver/join_network.h"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>

namespace {

int join(const char* path, int type) {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  const int result = ::setns(fd, type) == 0 ? 0 : errno;
  ::close(fd);
  return result;
}

}  // namespace

extern "C" int ranktest_join_network(const char* net_path, const char* user_path) {
  if (user_path && *user_path)
    if (const int error = join(user_path, CLONE_NEWUSER)) return error;
  return join(net_path, CLONE_NEWNET);
}
