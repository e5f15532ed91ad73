#include "launch/master_port.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "process/port_probe.h"
#include "text/file_tail.h"

namespace ranktest::launch {
namespace {

// How long a rank waits for rank 0's record: the launcher starts a test's
// tasks together, so it is there within moments unless rank 0's node is
// slow to start it; past this, the planned port is the best guess.
constexpr auto kWaitForRankZero = std::chrono::seconds(60);


// A port nothing listens on here, as the kernel picks one (outside
// ranktest's port-range, so no other test of the run is planned on it).
std::optional<int> kernel_chosen_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return std::nullopt;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  socklen_t length = sizeof address;
  std::optional<int> port;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0)
    port = ntohs(address.sin_port);
  ::close(fd);
  return port;
}

std::optional<int> parse_port(const std::string& text) {
  try {
    const int port = std::stoi(text);
    if (port > 0 && port < 65536) return port;
  } catch (...) {
  }
  return std::nullopt;
}

std::optional<int> planned_port(const execute::LaunchPlan& plan, int rank) {
  for (const auto& [name, value] : plan.ranks[static_cast<std::size_t>(rank)].set)
    if (name == "MASTER_PORT") return parse_port(value);
  return std::nullopt;
}

}  // namespace

std::optional<int> agreed_master_port(const execute::LaunchPlan& plan, int rank,
                                      const std::string& host, process::PortLocks& locks,
                                      std::string& note) {
  const auto planned = planned_port(plan, rank);
  if (!planned) return std::nullopt;
  const auto record = execute::master_port_path(plan.folder);
  if (rank == 0) {
    // The runner's machine: its own lock holds the planned port already.
    const bool elsewhere = !plan.runner_host.empty() && plan.runner_host != host;
    const auto free = [&](int port) {
      return elsewhere ? locks.claim(port) : process::tcp_port_is_free(port);
    };
    int port = *planned;
    if (!free(port))
      for (int attempt = 0; attempt < 20; ++attempt) {
        const auto chosen = kernel_chosen_port();
        if (!chosen || !free(*chosen)) continue;
        port = *chosen;
        note = "MASTER_PORT " + std::to_string(*planned) + " is in use on " + host +
               " (rank 0's node)" + (elsewhere ? " or held by another ranktest there" : "") +
               "; the ranks meet at " + std::to_string(port);
        break;
      }
    (void)execute::write_file_atomically(record, std::to_string(port) + "\n");
    return port;
  }
  const auto give_up = std::chrono::steady_clock::now() + kWaitForRankZero;
  while (std::chrono::steady_clock::now() < give_up) {
    if (const auto port = parse_port(text::read_file(record))) return port;
    // Told to stop before rank 0 started (the runner gave up on it).
    if (std::filesystem::exists(execute::stop_request_path(plan.folder))) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  note = "rank 0 said no MASTER_PORT within 60 s; using the planned " + std::to_string(*planned);
  return planned;
}

}  // namespace ranktest::launch
