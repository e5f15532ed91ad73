#include "process/test_cgroup.h"

#include "process/process_scan.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <sstream>
#include <thread>

namespace ranktest::process {
namespace fs = std::filesystem;
namespace {

// Small files under /proc and /sys: they can vanish or refuse at any
// moment, and must never throw.
// A cgroup's or /proc's file, from its start: the kernel fills the buffer
// it is given (seq_file, kernfs), so a read that comes back short is the
// end (one read, not two, for each file looked at at every test's end).
std::string read_kernel_file(int fd) {
  std::string content;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::pread(fd, buffer, sizeof buffer, static_cast<off_t>(content.size()));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    content.append(buffer, static_cast<std::size_t>(n));
    if (static_cast<std::size_t>(n) < sizeof buffer) break;
  }
  return content;
}

std::string read_small(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  auto content = read_kernel_file(fd);
  ::close(fd);
  return content;
}

bool write_small(const fs::path& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  return ok;
}

bool path_exists(const fs::path& path) { return ::access(path.c_str(), F_OK) == 0; }

std::vector<std::string> split(const std::string& text, char by) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(text);
  while (std::getline(in, item, by)) out.push_back(item);
  return out;
}

bool has_word(const std::string& text, const std::string& word) {
  for (const auto& item : split(text, ' '))
    for (const auto& part : split(item, ','))
      if (part == word || part == word + "\n") return true;
  return false;
}

// "key value" lines (memory.events, pids.events, memory.oom_control).
std::optional<std::uint64_t> keyed_value(const std::string& text, const std::string& key) {
  for (const auto& line : split(text, '\n')) {
    if (line.rfind(key + " ", 0) == 0) return std::strtoull(line.c_str() + key.size() + 1, nullptr, 10);
  }
  return std::nullopt;
}

std::optional<std::uint64_t> number_of(const std::string& text) {
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0]))) return std::nullopt;
  return std::strtoull(text.c_str(), nullptr, 10);
}

struct Mount {
  fs::path point;
  std::string root;  // the cgroup path the mount shows at its top
  int version = 2;
  std::string options;  // v1: the controllers it carries
};

std::vector<Mount> cgroup_mounts() {
  std::vector<Mount> mounts;
  for (const auto& line : split(read_small("/proc/self/mountinfo"), '\n')) {
    const auto fields = split(line, ' ');
    const auto dash = std::find(fields.begin(), fields.end(), "-");
    if (fields.size() < 6 || dash == fields.end() || dash + 1 == fields.end()) continue;
    const auto& type = *(dash + 1);
    if (type != "cgroup" && type != "cgroup2") continue;
    Mount mount;
    mount.root = fields[3];
    mount.point = fields[4];
    mount.version = type == "cgroup2" ? 2 : 1;
    if (dash + 3 < fields.end()) mount.options = *(dash + 3);
    mounts.push_back(std::move(mount));
  }
  return mounts;
}

// The folder of this process's cgroup in `mount`, from /proc/self/cgroup.
std::optional<fs::path> own_folder(const Mount& mount) {
  for (const auto& line : split(read_small("/proc/self/cgroup"), '\n')) {
    const auto first = line.find(':');
    const auto second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const auto controllers = line.substr(first + 1, second - first - 1);
    std::string path = line.substr(second + 1);
    const auto names = split(controllers, ',');
    const bool match =
        mount.version == 2
            ? line.rfind("0::", 0) == 0
            : !names.empty() && std::all_of(names.begin(), names.end(), [&](const auto& c) {
                return has_word(mount.options, c);
              });
    if (!match) continue;
    if (mount.root != "/" && path.rfind(mount.root, 0) == 0) path = path.substr(mount.root.size());
    const fs::path folder = mount.point / fs::path(path).relative_path();
    if (path_exists(folder / "cgroup.procs")) return folder;
  }
  return std::nullopt;
}

// Pids listed in `dir`'s cgroup.procs and every cgroup below it.
// The child cgroups of `dir`. readdir's d_type, not a stat per entry: a
// cgroup folder holds dozens of control files, and this runs at every test's
// end.
std::vector<fs::path> child_cgroups(const fs::path& dir) {
  std::vector<fs::path> children;
  DIR* folder = opendir(dir.c_str());
  if (!folder) return children;
  while (const dirent* entry = readdir(folder)) {
    if (entry->d_type != DT_DIR || entry->d_name[0] == '.') continue;
    children.push_back(dir / entry->d_name);
  }
  closedir(folder);
  return children;
}

void members(const fs::path& dir, std::vector<pid_t>& out) {
  for (const auto& line : split(read_small(dir / "cgroup.procs"), '\n'))
    if (!line.empty()) out.push_back(static_cast<pid_t>(std::atoi(line.c_str())));
  for (const auto& child : child_cgroups(dir)) members(child, out);
}

bool is_live(pid_t pid) {
  const auto stat = read_small(fmt::format("/proc/{}/stat", pid));
  const auto close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] != 'Z';
}

// Removes `dir` and every cgroup below it, deepest first. The rmdir is tried
// first: a test's cgroup rarely has cgroups below it, and this runs at every
// test's end, in every hierarchy (listing the folder first cost five system
// calls each time).
bool remove_tree(const fs::path& dir) {
  if (::rmdir(dir.c_str()) == 0 || errno == ENOENT) return true;
  bool ok = true;
  for (const auto& child : child_cgroups(dir)) ok &= remove_tree(child);
  return ::rmdir(dir.c_str()) == 0 || errno == ENOENT ? ok : false;
}

void kill_tree(const CgroupHierarchy& hierarchy, const fs::path& dir) {
  if (hierarchy.kill && write_small(dir / "cgroup.kill", "1")) return;
  // No cgroup.kill: signal every member until none is left (a fork racing
  // the kill is caught by the next round; a pids limit bounds the rounds).
  for (int round = 0; round < 100; ++round) {
    std::vector<pid_t> pids;
    members(dir, pids);
    pids.erase(std::remove(pids.begin(), pids.end(), ::getpid()), pids.end());
    if (pids.empty()) return;
    for (const pid_t pid : pids) ::kill(pid, SIGKILL);
    if (round > 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

// Empties and removes the folders of runners that are gone (killed with
// SIGKILL, so they never cleaned up): their tests would run on forever.
void clean_up_after_dead_runners(const CgroupHierarchy& hierarchy) {
  std::error_code error;
  for (fs::directory_iterator it(hierarchy.own, error), end; !error && it != end;
       it.increment(error)) {
    const auto name = it->path().filename().string();
    if (name.rfind("ranktest-", 0) != 0) continue;
    const int pid = std::atoi(name.c_str() + 9);
    if (pid <= 0 || pid == ::getpid()) continue;
    const auto comm = read_small(fmt::format("/proc/{}/comm", pid));
    if (comm.rfind("ranktest", 0) == 0) continue;  // that runner is alive
    kill_tree(hierarchy, it->path());
    for (int wait = 0; wait < 50 && !remove_tree(it->path()); ++wait)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace

std::unique_ptr<CgroupTree> CgroupTree::open() {
  std::unique_ptr<CgroupTree> tree(new CgroupTree());
  const auto mounts = cgroup_mounts();
  const std::string base_name = fmt::format("ranktest-{}", ::getpid());
  std::vector<std::string> used;
  const auto make_base = [&](const Mount& mount) -> std::optional<CgroupHierarchy> {
    const auto own = own_folder(mount);
    if (!own) return std::nullopt;
    CgroupHierarchy hierarchy;
    hierarchy.version = mount.version;
    hierarchy.own = *own;
    hierarchy.base = *own / base_name;
    clean_up_after_dead_runners(hierarchy);
    if (::mkdir(hierarchy.base.c_str(), 0755) != 0 && errno != EEXIST) return std::nullopt;
    return hierarchy;
  };

  bool have_pids = false, have_memory = false;
  for (const auto& mount : mounts) {
    if (mount.version != 2) continue;
    auto hierarchy = make_base(mount);
    if (!hierarchy) break;
    hierarchy->kill = path_exists(hierarchy->base / "cgroup.kill");
    // Controllers reach the tests only if this run's folder may hand them
    // down: enabled in our own cgroup's subtree_control (or enabled now,
    // which the kernel allows where our cgroup is the root).
    const auto available = read_small(hierarchy->own / "cgroup.controllers");
    for (const std::string controller : {"pids", "memory"}) {
      if (!has_word(available, controller)) continue;
      if (!has_word(read_small(hierarchy->own / "cgroup.subtree_control"), controller))
        write_small(hierarchy->own / "cgroup.subtree_control", "+" + controller);
      if (has_word(read_small(hierarchy->own / "cgroup.subtree_control"), controller) &&
          write_small(hierarchy->base / "cgroup.subtree_control", "+" + controller)) {
        (controller == "pids" ? hierarchy->pids : hierarchy->memory) = true;
      }
    }
    have_pids = hierarchy->pids;
    have_memory = hierarchy->memory;
    used.push_back(fmt::format("v2{}{}{}", hierarchy->kill ? " (cgroup.kill)" : "",
                               hierarchy->pids ? " pids" : "", hierarchy->memory ? " memory" : ""));
    tree->hierarchies_.push_back(std::move(*hierarchy));
    break;
  }
  for (const std::string controller : {"pids", "memory"}) {
    if (controller == "pids" ? have_pids : have_memory) continue;
    for (const auto& mount : mounts) {
      if (mount.version != 1 || !has_word(mount.options, controller)) continue;
      auto hierarchy = make_base(mount);
      if (!hierarchy) break;
      (controller == "pids" ? hierarchy->pids : hierarchy->memory) = true;
      used.push_back("v1 " + controller);
      tree->hierarchies_.push_back(std::move(*hierarchy));
      break;
    }
  }
  if (tree->hierarchies_.empty()) {
    tree->description_ = "no writable cgroup hierarchy (process groups and markers only)";
  } else {
    tree->description_ = "cgroup ";
    for (std::size_t i = 0; i < used.size(); ++i)
      tree->description_ += (i ? ", " : "") + used[i];
  }
  return tree;
}

CgroupTree::~CgroupTree() {
  for (auto& cgroup : to_remove_) cgroup.reset();
  for (const auto& spare : spares_)
    for (const auto& dir : spare) ::rmdir(dir.c_str());
  for (const auto& hierarchy : hierarchies_) {
    kill_tree(hierarchy, hierarchy.base);
    for (int wait = 0; wait < 100 && !remove_tree(hierarchy.base); ++wait)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

bool CgroupTree::limits_processes() const {
  return std::any_of(hierarchies_.begin(), hierarchies_.end(),
                     [](const auto& h) { return h.pids; });
}

bool CgroupTree::limits_memory() const {
  return std::any_of(hierarchies_.begin(), hierarchies_.end(),
                     [](const auto& h) { return h.memory; });
}

std::vector<fs::path> CgroupTree::make_folders() {
  const auto name = fmt::format("test-{}", next_id_++);
  std::vector<fs::path> dirs;
  for (const auto& hierarchy : hierarchies_) {
    const auto dir = hierarchy.base / name;
    if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
      for (const auto& made : dirs) ::rmdir(made.c_str());
      return {};
    }
    dirs.push_back(dir);
  }
  return dirs;
}

std::unique_ptr<TestCgroup> CgroupTree::create(const CgroupLimits& limits) {
  if (hierarchies_.empty()) return nullptr;
  std::vector<fs::path> dirs;
  if (!spares_.empty()) {
    dirs = std::move(spares_.back());
    spares_.pop_back();
  } else {
    dirs = make_folders();
    if (dirs.empty()) return nullptr;
  }
  for (std::size_t i = 0; i < dirs.size(); ++i) {
    const auto& hierarchy = hierarchies_[i];
    if (hierarchy.pids && limits.max_processes)
      write_small(dirs[i] / "pids.max", std::to_string(*limits.max_processes));
    if (hierarchy.memory && limits.max_memory) {
      const auto bytes = std::to_string(*limits.max_memory);
      write_small(dirs[i] / (hierarchy.version == 2 ? "memory.max" : "memory.limit_in_bytes"),
                  bytes);
    }
  }
  return std::unique_ptr<TestCgroup>(new TestCgroup(hierarchies_, std::move(dirs), limits));
}

void CgroupTree::remove_later(std::unique_ptr<TestCgroup> cgroup) {
  if (!cgroup) return;
  to_remove_.push_back(std::move(cgroup));
  // A runner that never waits (tests ending as fast as they start) must
  // not pile them up.
  if (to_remove_.size() > 64)
    std::erase_if(to_remove_, [](const auto& waiting) { return waiting->remove(); });
}

void CgroupTree::keep_spares(std::size_t count) { spares_wanted_ = std::min<std::size_t>(count, 8); }

void CgroupTree::tidy() {
  std::erase_if(to_remove_, [](const auto& cgroup) { return cgroup->remove(); });
  while (!hierarchies_.empty() && spares_.size() < spares_wanted_) {
    auto dirs = make_folders();
    if (dirs.empty()) break;  // create() will say so when a test needs one
    spares_.push_back(std::move(dirs));
  }
}

TestCgroup::~TestCgroup() {
  close_controls();
  if (removed_) return;
  kill_all();
  for (int wait = 0; wait < 100 && !remove(); ++wait)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
}

void TestCgroup::place(SpawnRequest& request) const {
  for (std::size_t i = 0; i < dirs_.size(); ++i) {
    if (hierarchies_[i].version == 2) request.cgroup_v2 = dirs_[i];
    else request.join_cgroup_procs.push_back(dirs_[i] / "cgroup.procs");
  }
}

std::vector<std::filesystem::path> TestCgroup::procs_files() const {
  std::vector<std::filesystem::path> files;
  for (const auto& dir : dirs_) files.push_back(dir / "cgroup.procs");
  return files;
}

std::string TestCgroup::read_control(const fs::path& file) const {
  auto known = controls_.find(file);
  if (known == controls_.end()) {
    const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return {};
    known = controls_.emplace(file, fd).first;
  }
  return read_kernel_file(known->second);
}

void TestCgroup::close_controls() const {
  for (const auto& [file, fd] : controls_) ::close(fd);
  controls_.clear();
}

std::vector<pid_t> TestCgroup::processes(pid_t besides) const {
  std::vector<pid_t> pids;
  if (dirs_.empty()) return pids;
  const auto& dir = dirs_.front();
  for (const auto& line : split(read_control(dir / "cgroup.procs"), '\n'))
    if (!line.empty()) pids.push_back(static_cast<pid_t>(std::atoi(line.c_str())));
  // Cgroups the test made below its own: listed where there may be any (a
  // v2 cgroup counts them in cgroup.stat).
  const bool any_below =
      hierarchies_.front().version != 2 ||
      keyed_value(read_control(dir / "cgroup.stat"), "nr_descendants").value_or(1) > 0;
  if (any_below)
    for (const auto& child : child_cgroups(dir)) members(child, pids);
  const pid_t self = ::getpid();
  std::erase_if(pids, [&](pid_t pid) { return pid == self || pid == besides || !is_live(pid); });
  std::sort(pids.begin(), pids.end());
  pids.erase(std::unique(pids.begin(), pids.end()), pids.end());
  return pids;
}

void TestCgroup::kill_all() const {
  for (std::size_t i = 0; i < dirs_.size(); ++i) {
    kill_tree(hierarchies_[i], dirs_[i]);
    if (hierarchies_[i].kill) return;  // cgroup.kill took every process
  }
}

CgroupUsage TestCgroup::usage() const {
  CgroupUsage usage;
  for (std::size_t i = 0; i < dirs_.size(); ++i) {
    const auto& hierarchy = hierarchies_[i];
    const auto& dir = dirs_[i];
    if (hierarchy.pids) {
      if (const auto peak = number_of(read_control(dir / "pids.peak")); peak && *peak > 0)
        usage.peak_processes = static_cast<int>(*peak);
      usage.process_limit_hit = keyed_value(read_control(dir / "pids.events"), "max").value_or(0) > 0;
    }
    if (hierarchy.memory) {
      usage.peak_memory = number_of(read_control(
          dir / (hierarchy.version == 2 ? "memory.peak" : "memory.max_usage_in_bytes")));
      const auto events =
          read_control(dir / (hierarchy.version == 2 ? "memory.events" : "memory.oom_control"));
      usage.oom_kills = keyed_value(events, "oom_kill").value_or(0);
      // v2 counts each time the limit invoked the OOM killer; v1 counts
      // every charge that failed at the limit.
      usage.memory_limit_reached =
          hierarchy.version == 2 ? keyed_value(events, "oom").value_or(0) > 0
                                 : number_of(read_control(dir / "memory.failcnt")).value_or(0) > 0;
    }
  }
  return usage;
}

bool TestCgroup::remove() {
  if (removed_) return true;
  close_controls();
  bool all = true;
  for (const auto& dir : dirs_) all &= remove_tree(dir);
  removed_ = all;
  return all;
}

}  // namespace ranktest::process
