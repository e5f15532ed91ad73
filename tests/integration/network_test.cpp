// network = "isolated": each test in a network namespace of its own, with
// only a loopback interface. Hard-coded ports of tests running at once do
// not collide, a test cannot reach the host's loopback, and where no
// namespace can be made the run is refused (or, if asked, falls back to the
// host's network) and says why.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>

#include "harness.h"

namespace ranktest::testing {
namespace {

std::string network_config(const std::string& network, const std::string& extra = "") {
  return "timeout = \"60s\"\nnetwork = \"" + network + "\"\n[[source]]\npaths = [\"" +
         fixture("network") + "\"]\n" + extra;
}

// The folder where the copies of a fixed-port test meet (see
// tests/fixtures/network.cpp).
std::string rendezvous_folder(const Workdir& dir) {
  const auto folder = dir.path() / "rendezvous";
  std::filesystem::create_directory(folder);
  std::filesystem::permissions(folder, std::filesystem::perms::all);
  return folder.string();
}

// It, as a source's env.
std::string rendezvous(const Workdir& dir) {
  return "env = { RENDEZVOUS_DIR = \"" + rendezvous_folder(dir) + "\" }\n";
}

std::string outcome_of(const nlohmann::json& finished) {
  return finished["result"]["outcome"].get<std::string>();
}

// Copies that merely ran one after the other would pass on any network:
// the check means something only if every copy started before the first
// one ended (each that holds its port waits for all to have tried theirs).
void expect_all_overlapped(const Invocation& run, std::size_t copies) {
  std::size_t started_before_first_end = 0;
  for (const auto& event : run.events()) {
    if (event["event"] == "test-finished") break;
    if (event["event"] == "test-started") ++started_before_first_end;
  }
  EXPECT_EQ(started_before_first_end, copies) << "the copies did not run at once";
}

// The ids run-started says run in a namespace of their own.
std::set<std::string> isolated_ids(const Invocation& run) {
  const auto events = run.events();
  if (events.empty()) return {};
  std::set<std::string> ids;
  for (const auto& id : events.front()["network_isolated"]) ids.insert(id.get<std::string>());
  return ids;
}

TEST(Network, EightCopiesOnOneFixedPortAllPassWhenIsolated) {
  Workdir dir;
  dir.write("ranktest.toml", network_config("isolated", rendezvous(dir)));
  const auto run = run_ranktest(dir, {"run", "-j", "8", "--filter", "Copies/FixedPort.*"});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  const auto finished = run.finished();
  ASSERT_EQ(finished.size(), 8u) << run.out;
  for (const auto& [id, event] : finished) EXPECT_EQ(outcome_of(event), "passed") << id;
  expect_all_overlapped(run, 8);
  EXPECT_EQ(isolated_ids(run).size(), 8u);
}

TEST(Network, EightCopiesOnOneFixedPortCollideOnTheHostAndTheHintSaysWhy) {
  Workdir dir;
  dir.write("ranktest.toml", network_config("host", rendezvous(dir)));
  const auto run = run_ranktest(dir, {"run", "-j", "8", "--filter", "Copies/FixedPort.*"});
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  const auto finished = run.finished();
  ASSERT_EQ(finished.size(), 8u) << run.out;
  std::size_t failed = 0;
  for (const auto& [id, event] : finished) {
    if (outcome_of(event) == "passed") continue;
    ++failed;
    EXPECT_EQ(outcome_of(event), "failed") << id;
    EXPECT_EQ(event["result"]["hints"][0]["match"], "Address already in use") << id;
  }
  // One copy holds the port until every other has tried, and failed, to bind it.
  EXPECT_EQ(failed, 7u);
  EXPECT_NE(run.out.find("Address already in use"), std::string::npos) << run.out;
  EXPECT_TRUE(isolated_ids(run).empty());
}

// A server on the host's loopback that greets every client with "host".
class HostServer {
 public:
  HostServer() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        ::listen(fd_, 8) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length) != 0)
      return;
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] {
      while (!stop_) {
        pollfd ready{fd_, POLLIN, 0};
        if (::poll(&ready, 1, 50) <= 0) continue;
        const int client = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (client < 0) continue;
        [[maybe_unused]] const auto n = ::write(client, "host", 4);
        ::close(client);
      }
    });
  }
  ~HostServer() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    ::close(fd_);
  }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

TEST(Network, AnIsolatedTestCannotReachTheHostsLoopbackAHostTestCan) {
  HostServer server;
  ASSERT_GT(server.port(), 0);
  const std::string env =
      "env = { HOST_SERVER_PORT = \"" + std::to_string(server.port()) + "\" }\n";
  for (const std::string network : {"host", "isolated"}) {
    Workdir dir;
    dir.write("ranktest.toml", network_config(network, env));
    const auto run = run_ranktest(dir, {"run", "--filter", "HostLoopback.*"});
    const auto result = run.finished().at("fixture_network::HostLoopback.ReachesTheHostsServer");
    if (network == "host") {
      EXPECT_EQ(outcome_of(result), "passed") << run.out;
    } else {
      EXPECT_EQ(outcome_of(result), "failed") << run.out;
      EXPECT_NE(result["result"]["failures"][0]["message"].get<std::string>().find(
                    "Connection refused"),
                std::string::npos)
          << result.dump();
    }
  }
}

// What an isolated test sees: only `lo`; and with tmpdir = "private" a
// TMPDIR in its attempt's folder.
TEST(Network, AnIsolatedTestSeesOnlyLoopbackAndItsOwnTmpdir) {
  Workdir dir;
  dir.write("ranktest.toml", network_config("isolated", "tmpdir = \"private\"\n"));
  const auto run = run_ranktest(dir, {"run", "--filter", "Surroundings.*"});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  const auto result = run.finished().at("fixture_network::Surroundings.PrintsInterfacesAndTmpdir");
  const auto log = read_file(result["result"]["log"].get<std::string>());
  EXPECT_NE(log.find("interfaces: lo \n"), std::string::npos) << log;
  const auto attempt = std::filesystem::path(result["result"]["log"].get<std::string>()).parent_path();
  EXPECT_NE(log.find("tmpdir: " + (attempt / "tmp").string() + "\n"), std::string::npos) << log;
  EXPECT_TRUE(std::filesystem::is_directory(attempt / "tmp"));
}

// A forked pytest test follows its own TMPDIR, though the server chose
// tempfile's folder while collecting; in plain mode too.
TEST(Network, PytestTestsUseTheirPrivateTmpdirForkedOrNot) {
  for (const std::string mode : {"fork-server", "plain"}) {
    Workdir dir;
    dir.write("ranktest.toml",
              "tmpdir = \"private\"\n[[source]]\nkind = \"pytest\"\npython = \"/usr/bin/python3\"\n"
              "mode = \"" + mode + "\"\n"
              "paths = [\"" RANKTEST_SOURCE_DIR "/tests/python_network/tmpdir\"]\n");
    const auto run = run_ranktest(dir, {"run"});
    EXPECT_EQ(run.exit_code, 0) << mode << run.out << run.err;
    const auto finished = run.finished();
    ASSERT_EQ(finished.size(), 1u) << run.out;
    EXPECT_EQ(finished.begin()->second["forked"].get<bool>(), mode == "fork-server");
  }
}

// The gtest fork server's children join the namespace before the test runs.
TEST(Network, ForkedGtestCopiesAreIsolatedToo) {
  Workdir dir;
  dir.write("ranktest.toml",
            "timeout = \"60s\"\nnetwork = \"isolated\"\n[[source]]\nmode = \"fork-server\"\n"
            "paths = [\"" + fixture("network") + "\"]\n" + rendezvous(dir));
  const auto run = run_ranktest(dir, {"run", "-j", "8", "--filter", "Copies/FixedPort.*"});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  const auto finished = run.finished();
  ASSERT_EQ(finished.size(), 8u) << run.out;
  for (const auto& [id, event] : finished) {
    EXPECT_EQ(outcome_of(event), "passed") << id;
    EXPECT_TRUE(event["forked"].get<bool>()) << id;
  }
  expect_all_overlapped(run, 8);
}

// torch's TCPStore on one hard-coded port (as torch's TCPStoreTest binds
// 29500; here a port outside ranktest's own range, so that the host-network
// half cannot disturb other runs on the machine), forked from pytest's
// fork server (the spawned way is the gtest copies' above, and torch's
// own in network_ranks_test.cpp).
TEST(Network, TcpStoreCopiesPassWhenIsolatedAndCollideOnTheHost) {
  if (shell("/usr/bin/python3 -c 'import torch.distributed'") != 0)
    GTEST_SKIP() << "python3-torch is not installed";
  for (const std::string network : {"isolated", "host"}) {
    Workdir dir;
    dir.write("ranktest.toml",
              "timeout = \"120s\"\nnetwork = \"" + network +
                  "\"\n[[source]]\nkind = \"pytest\"\npython = \"/usr/bin/python3\"\n"
                  "paths = [\"" RANKTEST_SOURCE_DIR "/tests/python_network/test_fixed_port.py\"]\n" +
                  "env = { RENDEZVOUS_DIR = \"" + rendezvous_folder(dir) +
                  "\", FIXED_PORT = \"31501\" }\n");
    const auto run = run_ranktest(dir, {"run", "-j", "8"});
    ASSERT_EQ(run.finished().size(), 8u) << run.out << run.err;
    // Every first attempt (forked): how it ended, and the hint it got.
    std::size_t passed = 0, collided = 0;
    for (const auto& event : run.events()) {
      if (event["event"] != "test-finished" || !event["forked"].get<bool>() ||
          event["attempt"] != 1)
        continue;
      passed += outcome_of(event) == "passed";
      const auto& hints = event["result"]["hints"];
      collided += outcome_of(event) == "failed" && !hints.empty() &&
                  hints[0]["match"] == "Address already in use";
    }
    if (network == "isolated") {
      EXPECT_EQ(passed, 8u) << run.out;
      EXPECT_EQ(run.exit_code, 0);
      expect_all_overlapped(run, 8);
    } else {
      // One copy holds the port while the others fail to bind it. (Each of
      // those then passes in a fresh process and forked again, the port
      // free by then: a flaky failure, which with no retries stands, as it
      // would in plain mode.)
      EXPECT_EQ(passed, 1u) << run.out;
      EXPECT_EQ(collided, 7u) << run.out;
    }
  }
}

TEST(Network, ListSaysWhichTestsRunIsolated) {
  Workdir dir;
  dir.write("ranktest.toml", network_config("host", "[[override]]\nfilter = \"HostLoopback.*\"\n"
                                                    "network = \"isolated\"\n"));
  const auto text = run_ranktest(dir, {"list"});
  EXPECT_NE(text.out.find("fixture_network::HostLoopback.ReachesTheHostsServer  [isolated network]\n"),
            std::string::npos)
      << text.out;
  EXPECT_EQ(occurrences(text.out, "isolated network"), 1u) << text.out;
  const auto json = nlohmann::json::parse(run_ranktest(dir, {"list", "--format", "json"}).out);
  for (const auto& test : json["tests"])
    EXPECT_EQ(test["network"], test["name"] == "HostLoopback.ReachesTheHostsServer" ? "isolated"
                                                                                   : "host");
}

TEST(Network, IsolatedWithMpirunIsAConfigurationError) {
  Workdir dir;
  dir.write("ranktest.toml",
            network_config("isolated", "[[override]]\nfilter = \"HostLoopback.*\"\n"
                                       "launcher = \"mpirun\"\n"));
  const auto run = run_ranktest(dir, {"run"});
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_NE(run.err.find("test fixture_network::HostLoopback.ReachesTheHostsServer has network = "
                         "\"isolated\" and launcher = \"mpirun\""),
            std::string::npos)
      << run.err;
  // In one table the error points at the key.
  dir.write("ranktest.toml",
            "[[source]]\npaths = [\"" + fixture("network") + "\"]\nlauncher = \"slurm\"\n"
            "network = \"isolated\"\n");
  const auto same_table = run_ranktest(dir, {"run"});
  EXPECT_EQ(same_table.exit_code, 2);
  EXPECT_NE(same_table.err.find("ranktest.toml:4:11: network = \"isolated\" in [[source]] cannot "
                                "apply to ranks that launcher = \"slurm\" starts"),
            std::string::npos)
      << same_table.err;
}

// A shell command that runs ranktest in `dir` without CAP_SYS_ADMIN. As
// the user nobody, which may make user namespaces where the machine allows
// them; or, with `no_user_namespaces`, in a user namespace of its own that
// may make no more of them, with every capability dropped for good.
std::string unprivileged(const Workdir& dir, const std::string& args, bool no_user_namespaces) {
  std::filesystem::permissions(dir.path(), std::filesystem::perms::all);
  if (!no_user_namespaces)
    return "cd " + dir.path().string() +
           " && setpriv --reuid=65534 --regid=65534 --clear-groups " RANKTEST_BINARY " " + args;
  return "cd " + dir.path().string() +
         " && unshare --user --map-root-user sh -c 'echo 0 > /proc/sys/user/max_user_namespaces "
         "&& exec setpriv --securebits +noroot,+noroot_locked --inh-caps -all --bounding-set -all "
         RANKTEST_BINARY " " + args + "'";
}

bool can_drop_privileges() {
  return ::geteuid() == 0 &&
         shell("unshare --user --map-root-user setpriv --bounding-set -all true") == 0 &&
         shell("setpriv --reuid=65534 --regid=65534 --clear-groups unshare --user --net true") == 0;
}

TEST(Network, WithoutPrivilegeAUserNamespaceIsolatesTheTests) {
  if (!can_drop_privileges())
    GTEST_SKIP() << "needs root, and unprivileged user namespaces, to run ranktest without "
                    "privileges";
  Workdir dir;
  dir.write("ranktest.toml", network_config("isolated", rendezvous(dir)));
  std::string output;
  const int code =
      shell(unprivileged(dir, "run -j 8 --filter \"Copies/FixedPort.*\"", false), &output);
  EXPECT_EQ(code, 0) << output;
  Invocation run;
  run.workdir = dir.path();
  const auto finished = run.finished();
  ASSERT_EQ(finished.size(), 8u) << output;
  for (const auto& [id, event] : finished) EXPECT_EQ(outcome_of(event), "passed") << id;
  expect_all_overlapped(run, 8);
}

TEST(Network, WhereNoNamespaceCanBeMadeTheRunIsRefusedOrFallsBackAsAsked) {
  if (!can_drop_privileges())
    GTEST_SKIP() << "needs root, and unprivileged user namespaces, to run ranktest without "
                    "privileges";
  Workdir dir;
  dir.write("ranktest.toml", network_config("isolated"));
  std::string output;
  const int refused = shell(unprivileged(dir, "run --filter \"Surroundings.*\"", true), &output);
  EXPECT_EQ(refused, 2) << output;
  EXPECT_NE(output.find("ranktest: error: network = \"isolated\" is asked for, but cannot create "
                        "a network namespace: unshare(CLONE_NEWNET): Operation not permitted"),
            std::string::npos)
      << output;
  EXPECT_NE(output.find("set network-fallback = \"host\""), std::string::npos) << output;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / ".ranktest" / "runs")) << "nothing may run";

  dir.write("ranktest.toml", "network-fallback = \"host\"\n" + network_config("isolated"));
  const int fell_back = shell(unprivileged(dir, "run --filter \"Surroundings.*\"", true), &output);
  EXPECT_EQ(fell_back, 0) << output;
  EXPECT_EQ(occurrences(output, "network = \"isolated\" is not available"), 1u) << output;
  EXPECT_NE(output.find("ranktest: warning: network = \"isolated\" is not available, so 1 test "
                        "runs on the host's network (network-fallback = \"host\"): cannot "
                        "create a network namespace"),
            std::string::npos)
      << output;
  Invocation run;
  run.workdir = dir.path();
  EXPECT_TRUE(isolated_ids(run).empty());
}

}  // namespace
}  // namespace ranktest::testing
