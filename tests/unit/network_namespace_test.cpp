#include "process/network_namespace.h"

#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

namespace ranktest::process {
namespace {

// What a thread that joined `network` sees: its interfaces (from
// /proc/thread-self/net/dev), whether lo is up, and whether it can bind
// `port` on the loopback.
struct View {
  std::string interfaces;
  bool loopback_up = false;
  bool bound = false;
};

View look_inside(const NetworkNamespace& network, int port) {
  View view;
  std::thread([&] {
    if (!join_network_namespace(network.net_fd(), -1)) return;
    std::ifstream dev("/proc/thread-self/net/dev");
    std::string line;
    for (int n = 0; std::getline(dev, line); ++n)
      if (n >= 2) view.interfaces += line.substr(line.find_first_not_of(' '),
                                                 line.find(':') - line.find_first_not_of(' ')) + " ";
    const int sock = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ifreq request{};
    std::strcpy(request.ifr_name, "lo");
    view.loopback_up = ::ioctl(sock, SIOCGIFFLAGS, &request) == 0 && (request.ifr_flags & IFF_UP);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    view.bound = ::bind(sock, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
                 ::listen(sock, 1) == 0;
    ::close(sock);
  }).join();
  return view;
}

TEST(NetworkNamespace, HasOnlyLoopbackUpAndItsOwnPorts) {
  auto network = NetworkNamespace::create();
  if (!network && ::geteuid() != 0) GTEST_SKIP() << network.error().message;
  ASSERT_TRUE(network) << network.error().message;
  if (network->user_fd() >= 0) GTEST_SKIP() << "a thread cannot join a user namespace";
  // The same port held on the host's loopback does not stop the namespace's.
  const int host = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  ASSERT_EQ(::bind(host, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(::listen(host, 1), 0);
  ASSERT_EQ(::getsockname(host, reinterpret_cast<sockaddr*>(&address), &length), 0);
  const View view = look_inside(*network, ntohs(address.sin_port));
  ::close(host);
  EXPECT_EQ(view.interfaces, "lo ");
  EXPECT_TRUE(view.loopback_up);
  EXPECT_TRUE(view.bound);
  // Each namespace is a new one.
  auto other = NetworkNamespace::create();
  ASSERT_TRUE(other);
  struct stat first {}, second {};
  ASSERT_EQ(::fstat(network->net_fd(), &first), 0);
  ASSERT_EQ(::fstat(other->net_fd(), &second), 0);
  EXPECT_NE(first.st_ino, second.st_ino);
  EXPECT_EQ(network->net_path(), "/proc/" + std::to_string(::getpid()) + "/fd/" +
                                     std::to_string(network->net_fd()));
  EXPECT_EQ(network->user_path(), "");
}

}  // namespace
}  // namespace ranktest::process
