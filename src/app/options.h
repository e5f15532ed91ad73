// What the command line says, before it is merged with ranktest.toml.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "select/partition.h"
#include "select/test_plan.h"

namespace ranktest::app {

enum class NoTestsPolicy { fail, warn, pass };
// --last-failed / --failed-first (pytest's --lf / --ff): the tests whose
// last verdict in the history did not pass, alone or first.
enum class LastFailed { off, only, first };
enum class ListFormat { text, json };
// What `ranktest run` prints on stdout: for people, or the events as JSON
// lines (docs/events.md).
enum class MessageFormat { human, json };

struct CommandLine {
  std::string program = "ranktest";  // as typed, for rerun hints
  std::optional<std::filesystem::path> config_path;
  std::vector<std::string> binaries;  // replace the configured sources
  select::Selection selection;
  // -m / -k: pytest's own selection, for every pytest source.
  std::optional<std::string> pytest_markers;
  std::optional<std::string> pytest_keyword;
  std::optional<select::Partition> partition;  // --partition hash:K/N, time:K/N
  std::optional<int> jobs;
  std::optional<std::string> allocation;  // --allocation auto|off
  std::optional<config::Duration> timeout;
  bool fail_fast = false;
  bool audit_children = false;
  std::optional<int> retries;  // --retries: every test's default
  bool recollect = false;  // ignore cached pytest collections  // the default for every test; overrides may say otherwise
  bool no_capture = false;
  std::optional<std::filesystem::path> junit;
  std::optional<std::filesystem::path> html;   // self-contained HTML report
  std::optional<std::filesystem::path> trace;  // Chrome/Perfetto trace of the schedule
  std::optional<std::filesystem::path> state_dir;
  // --devices KIND=ID,ID: replaces the inventory of that kind (the rerun
  // hint uses it to give a test the devices it had).
  // Each --devices, parsed: the kind and its ids, in the order given.
  std::vector<std::pair<std::string, std::vector<std::string>>> devices;
  NoTestsPolicy no_tests = NoTestsPolicy::fail;
  LastFailed last_failed = LastFailed::off;
  // --last-failed-no-failures (pytest's --lfnf): with --last-failed and no
  // such test, run the whole selection (all) or nothing (none).
  bool none_failed_runs_all = true;
  // --quarantine FILE: more quarantine entries, kept apart from ranktest.toml.
  std::vector<std::filesystem::path> quarantine_files;
  ListFormat list_format = ListFormat::text;
  MessageFormat message_format = MessageFormat::human;
  // --status-level, --final-status-level: none, fail, slow, pass, skip, all.
  std::string status_level = "skip";
  std::string final_status_level = "fail";
  std::string color = "auto";  // --color: auto, always, never
};

}  // namespace ranktest::app
