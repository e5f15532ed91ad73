// A cgroup per test, where the machine lets ranktest make one: every process
// the test starts stays in it whatever it does (setsid, double fork, a
// cleared environment), so it can be counted, limited, measured and killed
// as a whole.
//
// cgroup v2 is used wherever it is mounted (for cgroup.kill, and for the pids
// and memory controllers when it offers them); on hybrid systems the pids and
// memory controllers come from their v1 hierarchies instead. Where nothing is
// writable, CgroupTree::available() is false and the runner falls back to
// process groups and environment markers.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "process/child_process.h"

namespace ranktest::process {

struct CgroupLimits {
  std::optional<int> max_processes;
  std::optional<std::uint64_t> max_memory;  // bytes
};

struct CgroupUsage {
  std::optional<std::uint64_t> peak_memory;  // bytes, all processes together
  std::optional<int> peak_processes;
  // Processes of it the OOM killer ended, its own (at the cgroup's limit)
  // or the kernel's global one (the machine ran out): the kernel counts both.
  std::uint64_t oom_kills = 0;
  bool memory_limit_reached = false;  // its memory limit was hit
  bool process_limit_hit = false;     // a fork failed at max-processes
};

class TestCgroup;

// One hierarchy (a cgroup mount) ranktest uses, and its folder for this run.
struct CgroupHierarchy {
  int version = 2;
  std::filesystem::path own;   // the cgroup ranktest itself is in
  std::filesystem::path base;  // <own>/ranktest-<pid>: this run's tests go under it
  bool pids = false;           // provides pids.* here
  bool memory = false;         // provides memory.* here
  bool kill = false;           // has cgroup.kill
};

class CgroupTree {
 public:
  // Finds the hierarchies and creates this run's folder in each. Folders of
  // runners that died (SIGKILL) are emptied (their processes killed) and
  // removed first.
  static std::unique_ptr<CgroupTree> open();
  ~CgroupTree();
  CgroupTree(const CgroupTree&) = delete;
  CgroupTree& operator=(const CgroupTree&) = delete;

  bool available() const { return !hierarchies_.empty(); }
  // "cgroup v2 (cgroup.kill) + v1 pids, memory", or why none is used.
  const std::string& description() const { return description_; }
  bool limits_processes() const;
  bool limits_memory() const;

  // A new cgroup for one test, or nullptr when none could be made: a spare
  // made earlier by tidy() where there is one, else made now.
  std::unique_ptr<TestCgroup> create(const CgroupLimits& limits);
  // A finished test's cgroup, removed by the next tidy() (or now, when many
  // are waiting): its processes may still be leaving.
  void remove_later(std::unique_ptr<TestCgroup> cgroup);
  // How many cgroups tidy() keeps made ahead of need (at most 8).
  void keep_spares(std::size_t count);
  // The runner's housekeeping while it would otherwise wait for its tests:
  // removes finished tests' cgroups and makes spares. Making a cgroup is
  // most of what starting a test costs the runner (a memory cgroup's folder
  // holds dozens of control files), and its removal is most of a test's
  // end; done here, neither delays the start of the next test. A spare is
  // as fresh as one made at the start (no process was ever in it, so its
  // peaks and counters are zero), unlike a reused cgroup.
  void tidy();

 private:
  CgroupTree() = default;
  // The folders of a new cgroup, one per hierarchy, without limits; empty
  // when one could not be made.
  std::vector<std::filesystem::path> make_folders();
  std::vector<CgroupHierarchy> hierarchies_;
  std::string description_;
  std::uint64_t next_id_ = 0;
  std::size_t spares_wanted_ = 0;
  std::vector<std::vector<std::filesystem::path>> spares_;
  std::vector<std::unique_ptr<TestCgroup>> to_remove_;
};

class TestCgroup {
 public:
  ~TestCgroup();  // kills what is left and removes the folders
  TestCgroup(const TestCgroup&) = delete;
  TestCgroup& operator=(const TestCgroup&) = delete;

  // Puts a child in this cgroup as it starts (ChildProcess::spawn): the
  // runner itself never joins, so no limit of a test can end it.
  void place(SpawnRequest& request) const;
  // The cgroup.procs file of each hierarchy: a process that writes "0" to
  // each moves itself in.
  std::vector<std::filesystem::path> procs_files() const;
  // Live processes in the cgroup, but `besides` (a process the caller
  // knows is there and wants left out: a worker asking what its test left
  // beside it; its liveness is not read).
  std::vector<pid_t> processes(pid_t besides = 0) const;
  // Ends every process in it (cgroup.kill where there is one).
  void kill_all() const;
  CgroupUsage usage() const;
  // Removes the folders; false while processes are still leaving.
  bool remove();

 private:
  friend class CgroupTree;
  TestCgroup(std::vector<CgroupHierarchy> hierarchies, std::vector<std::filesystem::path> dirs,
             CgroupLimits limits)
      : hierarchies_(std::move(hierarchies)), dirs_(std::move(dirs)), limits_(limits) {}
  // A control file's text, read from its start through a descriptor kept
  // open: a worker's cgroup is looked at after each of its tests, and the
  // path lookup of each open was most of that.
  std::string read_control(const std::filesystem::path& file) const;
  void close_controls() const;
  std::vector<CgroupHierarchy> hierarchies_;
  std::vector<std::filesystem::path> dirs_;  // one per hierarchy
  CgroupLimits limits_;
  bool removed_ = false;
  mutable std::map<std::filesystem::path, int> controls_;
};

}  // namespace ranktest::process
