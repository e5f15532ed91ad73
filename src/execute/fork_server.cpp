#include "execute/fork_server.h"

#include "execute/file_range.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "process/own_files.h"
#include "text/file_tail.h"
#include "text/sanitize.h"

namespace ranktest::execute {
namespace {

using Json = nlohmann::json;

}  // namespace

std::string ForkServer::key(const TestSource& source) {
  std::string key = source.executable.string() + '\0' + source.working_directory.string();
  for (const auto& argument : source.collect_arguments) key += '\0' + argument;
  for (const auto& argument : source.extra_args) key += '\0' + argument;
  // The server starts with the source's environment (static initialisation
  // may read it): sources that differ in it get servers of their own.
  for (const auto& [name, value] : source.env) key += '\0' + name + '=' + value;
  return key;
}

std::filesystem::path ForkServer::preload_library() {
  return process::beside_own_binary("libranktest-forkserver.so");
}

Expected<std::unique_ptr<ForkServer>> ForkServer::launch(const TestSource& source,
                                                         const FrameworkAdapter& adapter,
                                                         const std::filesystem::path& log,
                                                         Clock::time_point ready_by) {
  // Both servers fork through it; the gtest server is it.
  const auto library = preload_library();
  if (::access(library.c_str(), R_OK) != 0)
    return Error{fmt::format("{} is missing; reinstall ranktest", library.string())};
  auto command = adapter.fork_server_command(source, library);
  if (!command) return command.error();
  // The source's environment, less what the server's command sets itself
  // (the pytest plugin's PYTHONPATH, which includes the source's).
  std::vector<std::pair<std::string, std::string>> env;
  for (const auto& entry : source.env)
    if (std::none_of(command->set.begin(), command->set.end(),
                     [&](const auto& set) { return set.first == entry.first; }))
      env.push_back(entry);
  env.emplace_back("RANKTEST_FORK_SERVER", "1");
  env.insert(env.end(), command->set.begin(), command->set.end());
  process::SpawnRequest request;
  request.argv = command->argv;
  request.environment = process::make_environment(env, {});
  request.working_directory = source.working_directory;
  request.stdout_path = log;
  int requests[2], replies[2];
  if (::pipe2(requests, O_CLOEXEC) != 0) return Error{std::strerror(errno)};
  if (::pipe2(replies, O_CLOEXEC) != 0) {
    ::close(requests[0]);
    ::close(requests[1]);
    return Error{std::strerror(errno)};
  }
  request.descriptors = {{requests[0], 0}, {replies[1], 3}};
  auto child = process::ChildProcess::spawn(request);
  ::close(requests[0]);
  ::close(replies[1]);
  if (!child) {
    ::close(requests[1]);
    ::close(replies[0]);
    return child.error();
  }
  std::unique_ptr<ForkServer> server(
      new ForkServer(adapter, std::move(*child), requests[1], replies[0], log, ready_by));
  if (source.fork_exit_full) server->set_exit_probe(ExitProbe::full);
  return server;
}

Error ForkServer::cannot_serve(const std::string& why) const {
  const auto said = text::read_file_tail(log_, 2000).bytes;
  return Error{fmt::format("{}; it printed: {}", why,
                           text::terminal_safe(text::truncate_utf8(said, 600)))};
}

std::optional<Expected<Done>> ForkServer::poll_ready(Clock::time_point now) {
  if (!starting_) return Expected<Done>(Done{});
  auto line = read_line(now);
  if (!line) return Expected<Done>(cannot_serve(line.error().message));
  if (!*line) {
    if (now < ready_by_) return std::nullopt;
    return Expected<Done>(cannot_serve("the fork server was not ready in time"));
  }
  starting_ = false;
  const auto json = Json::parse(**line, nullptr, false);
  if (json.is_discarded() || !json.value("ready", false))
    return Expected<Done>(Error{"the server answered what ranktest does not understand: " + **line});
  if (json.contains("guard") && json["guard"].is_string())
    return Expected<Done>(Error{json["guard"].get<std::string>()});
  return Expected<Done>(Done{});
}

ForkServer::~ForkServer() {
  // End of its requests: it leaves its loop; ~ChildProcess kills what is left.
  if (to_server_ >= 0) ::close(to_server_);
  if (from_server_ >= 0) ::close(from_server_);
}

Expected<std::optional<std::string>> ForkServer::read_line(Clock::time_point deadline) {
  for (;;) {
    const auto newline = buffered_.find('\n');
    if (newline != std::string::npos) {
      auto line = buffered_.substr(0, newline);
      buffered_.erase(0, newline + 1);
      return std::optional<std::string>(std::move(line));
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - Clock::now());
    pollfd fd{from_server_, POLLIN, 0};
    const int ready = ::poll(&fd, 1, static_cast<int>(std::max<long>(0, left.count())));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) return std::optional<std::string>();
    if (ready < 0) return Error{std::strerror(errno)};
    char chunk[4096];
    const ssize_t n = ::read(from_server_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Error{"the fork server exited"};
    buffered_.append(chunk, static_cast<std::size_t>(n));
  }
}

std::string fork_message(const FrameworkAdapter& adapter, const ForkRequest& request) {
  Json cgroups = Json::array();
  for (const auto& path : request.cgroup_procs) cgroups.push_back(path.string());
  Json message{{"log", request.log.string()},
               {"cwd", request.working_directory.string()},
               {"pgid", request.process_group},
               {"cgroups", cgroups},
               {"netns", request.network_namespace},
               {"userns", request.user_namespace}};
  if (!request.worker_requests.empty())
    message["worker"] = Json{{"requests", request.worker_requests.string()},
                             {"replies", request.worker_replies.string()}};
  if (!request.before.empty()) message["before"] = request.before;
  adapter.add_fork_request(*request.test, request.argv, request.environment, request.full_exit,
                           message);
  return message.dump(-1, ' ', true, Json::error_handler_t::replace) + "\n";
}

Expected<Done> ForkServer::send_fork(const ForkRequest& request) {
  if (starting_) return Error{"the fork server is not ready"};
  if (busy()) return Error{"the fork server has not answered the last request"};
  if (!write_all(to_server_, fork_message(adapter_, request)))
    return Error{"the fork server is gone"};
  fork_group_ = request.process_group;
  fork_deadline_ = Clock::now() + std::chrono::seconds(30);
  return Done{};
}

std::optional<Expected<pid_t>> ForkServer::poll_fork(Clock::time_point now) {
  if (!busy()) return Expected<pid_t>(Error{"no fork was asked for"});
  auto line = read_line(Clock::time_point{});  // what has arrived, no wait
  const pid_t group = *fork_group_;
  if (!line) {
    fork_group_.reset();
    return Expected<pid_t>(line.error());
  }
  if (!*line) {
    if (now < fork_deadline_) return std::nullopt;
    fork_group_.reset();
    return Expected<pid_t>(Error{"the fork server did not answer in time"});
  }
  fork_group_.reset();
  fork_deadline_ = Clock::time_point::max();
  const auto reply = Json::parse(**line, nullptr, false);
  if (!reply.is_discarded() && reply.contains("pid") && reply["pid"].is_number_integer()) {
    const auto pid = static_cast<pid_t>(reply["pid"].get<int>());
    // The test is our child and joins its group itself; whichever of the
    // two runs first, the group exists once we return (a stop signalled to
    // it at once must not miss the test).
    ::setpgid(pid, group ? group : pid);
    return Expected<pid_t>(pid);
  }
  if (!reply.is_discarded() && reply.contains("refused") && reply["refused"].is_string())
    return Expected<pid_t>(Error{reply["refused"].get<std::string>()});
  return Expected<pid_t>(
      Error{"the fork server answered what ranktest does not understand: " + **line});
}

}  // namespace ranktest::execute
