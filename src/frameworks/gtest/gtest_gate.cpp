// A gtest worker's gate (isolation = "worker", gtest_worker.cpp): GoogleTest
// streams each test's end to the runner (--gtest_stream_result_to) and goes
// straight on to the next test; the runner reads the stream later. Then a
// process the fifth test leaves running would already exist when the
// runner looks at what the second left, and be blamed on it. So the
// worker waits, after each "event=TestEnd" line it sends, for the runner's
// one-byte answer, given once the runner has looked at what the test left:
// 'c' goes on to the next test; 'e' or 'f' ends the worker here (the test
// failed or left processes, or the run stops), with the exit code the
// binary would have had (0 or 1) once its output is flushed, so the next
// test never starts in it. Only the connection to 127.0.0.1 on the port
// RANKTEST_GTEST_GATE names is gated; every other write is libc's.
//
// Preloaded into a plain worker as libranktest-gtest-gate.so; part of
// libranktest-forkserver.so too, for workers a binary's fork server forks.
#include <arpa/inet.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

int gated_fd = -1;

bool is_gated_address(const sockaddr* address, socklen_t length) {
  if (!address || address->sa_family != AF_INET || length < sizeof(sockaddr_in)) return false;
  const char* port = std::getenv("RANKTEST_GTEST_GATE");
  if (!port || !*port) return false;
  const auto* in = reinterpret_cast<const sockaddr_in*>(address);
  return ntohs(in->sin_port) == std::atoi(port) && ntohl(in->sin_addr.s_addr) == INADDR_LOOPBACK;
}

// A test's last words before a crash: GoogleTest's printer and the test's
// own printf or std::cout write to stdout, which the C library buffers in
// blocks when it is a file (the worker's log), and a crash loses the block.
// Line-buffered, each line is in the log once written. (Only where the
// runner asks, RANKTEST_GTEST_LINES: the fork server's copy of this code
// does the same in each forked test.)
__attribute__((constructor)) void line_buffered_output() {
  if (std::getenv("RANKTEST_GTEST_LINES")) std::setvbuf(stdout, nullptr, _IOLBF, BUFSIZ);
}

}  // namespace

extern "C" int connect(int fd, const sockaddr* address, socklen_t length) {
  using Connect = int (*)(int, const sockaddr*, socklen_t);
  static const auto real = reinterpret_cast<Connect>(::dlsym(RTLD_NEXT, "connect"));
  const int result = real(fd, address, length);
  if (result == 0 && is_gated_address(address, length)) {
    gated_fd = fd;
    // One line, then a wait for one byte: never held back by Nagle.
    const int on = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
  }
  return result;
}

extern "C" ssize_t write(int fd, const void* data, size_t size) {
  using Write = ssize_t (*)(int, const void*, size_t);
  static const auto real = reinterpret_cast<Write>(::dlsym(RTLD_NEXT, "write"));
  const ssize_t written = real(fd, data, size);
  constexpr char kTestEnd[] = "event=TestEnd&";
  if (fd == gated_fd && written > 0 && size >= sizeof kTestEnd - 1 &&
      std::memcmp(data, kTestEnd, sizeof kTestEnd - 1) == 0) {
    char answer = 'c';
    // EOF or an error: the runner is gone or gave the worker up; go on.
    while (::read(fd, &answer, 1) < 0 && errno == EINTR) {
    }
    if (answer == 'e' || answer == 'f') {
      std::fflush(stdout);
      std::fflush(stderr);
      ::_exit(answer == 'f' ? 1 : 0);
    }
  }
  return written;
}
