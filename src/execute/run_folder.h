// The folder that holds everything one run wrote:
//   <state-dir>/runs/<run-id>/events.jsonl
//   <state-dir>/runs/<run-id>/tests/<safe test name>/attempt-<n>/output.log
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "model/expected.h"

namespace ranktest::execute {

// A folder name for any test id: only [A-Za-z0-9._-], never "." or "..",
// at most ~120 bytes, and ending in a hash of the whole id so two ids that
// clean up alike still get different folders.
std::string safe_file_name(std::string_view test_id);

// "20261202-140312-5f3a": sortable by time, unique enough for one machine.
std::string make_run_id(std::chrono::system_clock::time_point now);
// Whether `name` is a run id as make_run_id makes them.
bool is_run_id(std::string_view name);

class RunFolder {
 public:
  // Creates <state_dir>/runs/<run_id>/. `latest` still names the run
  // before: see point_latest_here.
  static Expected<RunFolder> create(const std::filesystem::path& state_dir,
                                    const std::string& run_id);

  // Points <state_dir>/runs/latest at this run, atomically. Called once the
  // run's journal holds its first event, so a runner killed while starting
  // leaves `latest` (and the durations, failures and report read from it)
  // on the last run that has something to read.
  void point_latest_here() const;

  const std::filesystem::path& path() const { return path_; }
  const std::string& run_id() const { return run_id_; }

  // Creates and returns the folder for one attempt of one test.
  Expected<std::filesystem::path> attempt_folder(std::string_view test_id,
                                                 int attempt) const;

  // tmpdir = "private": <attempt folder>/tmp, created empty, the test's
  // TMPDIR. Kept with the attempt's logs: what a failing test left there
  // can be read after it.
  static Expected<std::filesystem::path> private_tmpdir(const std::filesystem::path& attempt);

  // Why the run folder cannot take more writes (its file system is full,
  // read-only, over quota: strerror), or nullopt when 64 KiB still fit. A
  // test that failed then may have failed only because what it wrote (its
  // report, its log) was lost: ranktest's fault, not the test's.
  std::optional<std::string> cannot_write() const;

 private:
  RunFolder(std::filesystem::path path, std::string run_id)
      : path_(std::move(path)), run_id_(std::move(run_id)) {}
  std::filesystem::path path_;
  std::string run_id_;
};

}  // namespace ranktest::execute
