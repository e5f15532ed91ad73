#include "execute/launch_plan.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

namespace ranktest::execute {
namespace {

using nlohmann::json;

// Parses `text` with `read`, turning any JSON error into one line naming `what`.
template <typename T, typename Read>
Expected<T> parse_as(std::string_view text, std::string_view what, Read read) {
  try {
    return read(json::parse(text));
  } catch (const json::exception& error) {
    return Error{fmt::format("{} is not valid: {}", what, error.what())};
  }
}

}  // namespace

std::string launch_plan_json(const LaunchPlan& plan) {
  json ranks = json::array();
  for (const auto& rank : plan.ranks) {
    json set = json::array();
    for (const auto& [name, value] : rank.set) set.push_back({name, value});
    ranks.push_back({{"argv", rank.argv},
                     {"set", std::move(set)},
                     {"remove", rank.remove},
                     {"cwd", rank.working_directory.string()},
                     {"log", rank.log.string()},
                     {"says_when_it_begins", rank.says_when_it_begins}});
  }
  return json{{"test", plan.test_id},
              {"folder", plan.folder.string()},
              {"master_address", plan.master_address},
              {"node_order", plan.node_order},
              {"runner_host", plan.runner_host},
              {"ranks", std::move(ranks)}}
      .dump();
}

Expected<LaunchPlan> parse_launch_plan(std::string_view text) {
  return parse_as<LaunchPlan>(text, "the launch plan", [](const json& doc) {
    LaunchPlan plan;
    plan.test_id = doc.at("test").get<std::string>();
    plan.folder = doc.at("folder").get<std::string>();
    plan.master_address = doc.at("master_address").get<std::string>();
    plan.node_order = doc.value("node_order", std::vector<std::string>{});
    plan.runner_host = doc.value("runner_host", std::string());
    for (const auto& entry : doc.at("ranks")) {
      RankPlan rank;
      rank.argv = entry.at("argv").get<std::vector<std::string>>();
      for (const auto& pair : entry.at("set"))
        rank.set.emplace_back(pair.at(0).get<std::string>(), pair.at(1).get<std::string>());
      rank.remove = entry.at("remove").get<std::vector<std::string>>();
      rank.working_directory = entry.at("cwd").get<std::string>();
      rank.log = entry.at("log").get<std::string>();
      rank.says_when_it_begins = entry.value("says_when_it_begins", false);
      plan.ranks.push_back(std::move(rank));
    }
    return plan;
  });
}

std::string rank_start_json(const RankStart& start) {
  return json{{"rank", start.rank},
              {"host", start.host},
              {"pid", start.pid},
              {"job_step", start.job_step}}
      .dump();
}

Expected<RankStart> parse_rank_start(std::string_view text) {
  return parse_as<RankStart>(text, "a rank's start record", [](const json& doc) {
    return RankStart{doc.at("rank").get<int>(), doc.at("host").get<std::string>(),
                     doc.at("pid").get<int>(), doc.at("job_step").get<std::string>()};
  });
}

std::string rank_end_json(const RankEnd& end) {
  return json{{"signaled", end.exit.signaled},
              {"code", end.exit.code},
              {"signal", end.exit.signal},
              {"core_dumped", end.exit.core_dumped},
              {"stopped", end.stopped},
              {"ended_at_ns", end.ended_at_ns},
              {"left_behind", end.left_behind}}
      .dump();
}

Expected<RankEnd> parse_rank_end(std::string_view text) {
  return parse_as<RankEnd>(text, "a rank's end record", [](const json& doc) {
    RankEnd end;
    end.exit.signaled = doc.at("signaled").get<bool>();
    end.exit.code = doc.at("code").get<int>();
    end.exit.signal = doc.at("signal").get<int>();
    end.exit.core_dumped = doc.at("core_dumped").get<bool>();
    end.stopped = doc.at("stopped").get<bool>();
    end.ended_at_ns = doc.at("ended_at_ns").get<std::int64_t>();
    end.left_behind = doc.at("left_behind").get<std::vector<int>>();
    return end;
  });
}

std::filesystem::path launch_plan_path(const std::filesystem::path& folder) {
  return folder / "launch-plan.json";
}
std::filesystem::path rank_start_path(const std::filesystem::path& folder, int rank) {
  return folder / fmt::format("rank-{}.start.json", rank);
}
std::filesystem::path master_port_path(const std::filesystem::path& folder) {
  return folder / "master-port";
}
std::filesystem::path rank_end_path(const std::filesystem::path& folder, int rank) {
  return folder / fmt::format("rank-{}.end.json", rank);
}
std::filesystem::path rank_began_path(const std::filesystem::path& folder, int rank) {
  return folder / fmt::format("rank-{}.began", rank);
}
std::filesystem::path stop_request_path(const std::filesystem::path& folder) {
  return folder / "stop-requested";
}
std::filesystem::path stacks_request_path(const std::filesystem::path& folder) {
  return folder / "stacks-requested";
}
std::filesystem::path stacks_done_path(const std::filesystem::path& folder, int rank) {
  return folder / fmt::format("rank-{}.stacks-done", rank);
}
std::filesystem::path rank_stack_path(const std::filesystem::path& folder, int rank, int pid) {
  return folder / fmt::format("stacks-rank-{}-{}.txt", rank, pid);
}

bool parse_rank_stack_name(std::string_view name, int& rank, int& pid) {
  char tail = 0;
  const std::string copy(name);
  return std::sscanf(copy.c_str(), "stacks-rank-%d-%d.tx%c", &rank, &pid, &tail) == 3 &&
         tail == 't' && copy.ends_with(".txt") && rank >= 0 && pid > 0;
}

Expected<Done> write_file_atomically(const std::filesystem::path& path, std::string_view text) {
  const auto temporary = path.string() + fmt::format(".{}.tmp", ::getpid());
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return Error{fmt::format("{}: cannot write: {}", temporary, std::strerror(errno))};
  std::size_t written = 0;
  while (written < text.size()) {
    const auto n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = errno;
      ::close(fd);
      ::unlink(temporary.c_str());
      return Error{fmt::format("{}: cannot write: {}", temporary, std::strerror(error))};
    }
    written += static_cast<std::size_t>(n);
  }
  ::close(fd);
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    return Error{fmt::format("{}: cannot write: {}", path.string(), std::strerror(error))};
  }
  return Done{};
}

}  // namespace ranktest::execute
