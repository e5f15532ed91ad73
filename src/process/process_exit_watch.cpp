#include "process/process_exit_watch.h"

#include "process/process_scan.h"

#include <fcntl.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

namespace ranktest::process {
namespace {

// Events queued while the runner is busy elsewhere: a fork bomb or a build
// beside the run makes thousands a second.
constexpr int kReceiveBuffer = 8 * 1024 * 1024;
// Past this many live processes the table is stale (exits were lost):
// start over rather than grow.
constexpr std::size_t kMaxNodes = 1 << 20;
// A process deeper than this below its root is not looked for.
constexpr int kMaxDepth = 256;

bool listen(int fd, proc_cn_mcast_op op) {
  // A netlink header, the connector's header (whose data is the op), the op.
  alignas(nlmsghdr) char request[NLMSG_SPACE(sizeof(cn_msg) + sizeof(proc_cn_mcast_op))] = {};
  auto* header = reinterpret_cast<nlmsghdr*>(request);
  header->nlmsg_len = NLMSG_LENGTH(sizeof(cn_msg) + sizeof(proc_cn_mcast_op));
  header->nlmsg_type = NLMSG_DONE;
  auto* message = static_cast<cn_msg*>(NLMSG_DATA(header));
  message->id.idx = CN_IDX_PROC;
  message->id.val = CN_VAL_PROC;
  message->len = sizeof(proc_cn_mcast_op);
  std::memcpy(message->data, &op, sizeof op);
  return ::send(fd, request, header->nlmsg_len, 0) == static_cast<ssize_t>(header->nlmsg_len);
}

}  // namespace

Expected<ProcessExitWatch> ProcessExitWatch::open() {
  const int fd = ::socket(PF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_CONNECTOR);
  if (fd < 0) return Error{std::string("netlink connector socket: ") + std::strerror(errno)};
  ProcessExitWatch watch(fd);
  sockaddr_nl address{};
  address.nl_family = AF_NETLINK;
  address.nl_groups = CN_IDX_PROC;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0)
    return Error{std::string("the kernel's process events: ") + std::strerror(errno)};
  const int size = kReceiveBuffer;
  if (::setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size) != 0)
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
  if (!listen(fd, PROC_CN_MCAST_LISTEN))
    return Error{std::string("the kernel's process events: ") + std::strerror(errno)};
  // The kernel acknowledges the subscription; a refusal (EPERM outside the
  // initial namespaces) comes back here, not from send().
  pollfd ready{fd, POLLIN, 0};
  if (::poll(&ready, 1, 1000) <= 0)
    return Error{"the kernel's process events: no answer to the subscription"};
  alignas(nlmsghdr) char buffer[4096];
  const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
  if (n < 0) return Error{std::string("the kernel's process events: ") + std::strerror(errno)};
  const auto* header = reinterpret_cast<const nlmsghdr*>(buffer);
  if (NLMSG_OK(header, static_cast<unsigned>(n))) {
    const auto* message = static_cast<const cn_msg*>(NLMSG_DATA(header));
    const auto* event = reinterpret_cast<const proc_event*>(message->data);
    if (event->what == proc_event::PROC_EVENT_NONE && event->event_data.ack.err != 0)
      return Error{std::string("the kernel's process events: ") +
                   std::strerror(static_cast<int>(event->event_data.ack.err))};
    watch.handle(event);
  }
  return watch;
}

ProcessExitWatch::ProcessExitWatch(ProcessExitWatch&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      lost_(other.lost_),
      nodes_(std::move(other.nodes_)),
      roots_(std::move(other.roots_)) {}

ProcessExitWatch& ProcessExitWatch::operator=(ProcessExitWatch&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    lost_ = other.lost_;
    nodes_ = std::move(other.nodes_);
    roots_ = std::move(other.roots_);
  }
  return *this;
}

ProcessExitWatch::~ProcessExitWatch() {
  if (fd_ < 0) return;
  listen(fd_, PROC_CN_MCAST_IGNORE);
  ::close(fd_);
}

void ProcessExitWatch::drain() {
  alignas(nlmsghdr) char buffer[16384];
  for (;;) {
    const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == ENOBUFS) {  // the queue overflowed: some events are gone
        lost_ = true;
        continue;
      }
      return;  // EAGAIN: nothing more queued
    }
    if (n == 0) return;
    auto left = static_cast<unsigned>(n);
    for (auto* header = reinterpret_cast<const nlmsghdr*>(buffer); NLMSG_OK(header, left);
         header = NLMSG_NEXT(header, left)) {
      if (header->nlmsg_type == NLMSG_ERROR || header->nlmsg_type == NLMSG_NOOP) continue;
      const auto* message = static_cast<const cn_msg*>(NLMSG_DATA(header));
      handle(message->data);
    }
  }
}

void ProcessExitWatch::handle(const void* data) {
  const auto* event = static_cast<const proc_event*>(data);
  switch (event->what) {
    case proc_event::PROC_EVENT_FORK: {
      const auto& fork = event->event_data.fork;
      if (fork.child_pid != fork.child_tgid) return;  // a thread, not a process
      if (nodes_.size() >= kMaxNodes) forget_stale();
      Node node;
      node.parent = fork.parent_tgid;
      // Named a root before its own fork was read: it stays one.
      if (const auto named = nodes_.find(fork.child_tgid);
          named != nodes_.end() && named->second.root == fork.child_tgid) {
        named->second.parent = fork.parent_tgid;
        return;
      }
      if (const auto parent = nodes_.find(fork.parent_tgid); parent != nodes_.end()) {
        node.root = parent->second.root;
        if (node.root) node.command = parent->second.command;
      } else if (roots_.count(fork.parent_tgid)) {
        node.root = fork.parent_tgid;
      }
      nodes_[fork.child_tgid] = std::move(node);
      return;
    }
    case proc_event::PROC_EVENT_EXEC: {
      const auto& exec = event->event_data.exec;
      const auto found = nodes_.find(exec.process_tgid);
      if (found == nodes_.end()) return;
      found->second.execd = true;
      if (found->second.root) found->second.command = command_line(exec.process_tgid);
      return;
    }
    case proc_event::PROC_EVENT_EXIT: {
      const auto& exit = event->event_data.exit;
      if (exit.process_pid != exit.process_tgid) return;  // a thread ended
      const auto found = nodes_.find(exit.process_tgid);
      if (found == nodes_.end()) return;
      const Node node = std::move(found->second);
      nodes_.erase(found);
      // A root's own end is the runner's to see; its descendants' are ours.
      if (!node.root || node.root == exit.process_tgid || exit.exit_code == 0) return;
      const auto root = roots_.find(node.root);
      if (root == roots_.end() || root->second.ended_badly.size() >= kKeptPerRoot) return;
      root->second.ended_badly.push_back(WatchedExit{exit.process_tgid, node.parent, node.command,
                                                     node.execd,
                                                     static_cast<int>(exit.exit_code)});
      return;
    }
    default:
      return;
  }
}

// The table outgrew any machine's live processes: exits were lost. What
// belongs to a watched root stays; the rest starts over.
void ProcessExitWatch::forget_stale() {
  lost_ = true;
  std::erase_if(nodes_, [](const auto& entry) { return entry.second.root == 0; });
}

void ProcessExitWatch::watch(pid_t root) {
  roots_[root];
  // Its own node, if its fork was seen: a root's descendants are found
  // through it, whatever it descends from.
  if (auto found = nodes_.find(root); found != nodes_.end()) {
    // A worker watched again for its next test keeps the command read
    // before (an exec reads it anew).
    if (found->second.root != root || found->second.command.empty())
      found->second.command = command_line(root);
    found->second.root = root;
  } else {
    nodes_[root] = Node{0, root, false, command_line(root)};
  }
  // Processes it started before it was named (a forked test can fork
  // before the fork server's reply reaches the runner).
  for (auto& [pid, node] : nodes_) {
    if (node.root) continue;
    pid_t up = node.parent;
    for (int depth = 0; up && depth < kMaxDepth; ++depth) {
      if (up == root) {
        node.root = root;
        node.command = command_line(pid);
        break;
      }
      const auto parent = nodes_.find(up);
      if (parent == nodes_.end()) break;
      up = parent->second.parent;
    }
  }
}

std::vector<WatchedExit> ProcessExitWatch::take(pid_t root, std::chrono::milliseconds settle) {
  drain();
  // A descendant already reaped by its parent may not have been told yet:
  // its exit event follows the moment its parent could wait for it.
  const auto until = std::chrono::steady_clock::now() + settle;
  for (;;) {
    bool pending = false;
    for (const auto& [pid, node] : nodes_)
      if (node.root == root && pid != root &&
          !std::filesystem::exists("/proc/" + std::to_string(pid))) {
        pending = true;
        break;
      }
    const auto now = std::chrono::steady_clock::now();
    if (!pending || now >= until) break;
    pollfd ready{fd_, POLLIN, 0};
    ::poll(&ready, 1,
           static_cast<int>(
               std::chrono::duration_cast<std::chrono::milliseconds>(until - now).count()) + 1);
    drain();
  }
  std::vector<WatchedExit> ended;
  if (const auto found = roots_.find(root); found != roots_.end()) {
    ended = std::move(found->second.ended_badly);
    roots_.erase(found);
  }
  // What is still alive of it is the leak check's to find; it is no
  // longer watched.
  for (auto& [pid, node] : nodes_)
    if (node.root == root) {
      node.root = 0;
      node.command.clear();
    }
  return ended;
}

}  // namespace ranktest::process
