#pragma once

#include <sys/types.h>

#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>

#include "events/reporter.h"
#include "model/expected.h"

namespace ranktest::events {

// Appends every event to <run folder>/events.jsonl and flushes it at once,
// so the file holds every finished test even if the runner is killed.
//
// The file appears under its name only with its first event in it: it is
// written as ".events.jsonl.starting" and renamed once that line is on disk.
// A runner killed while it starts (before run-started) leaves no journal
// that says nothing, only a run folder without one.
class Journal final : public Reporter {
 public:
  // Creates the file for appending. `started` runs once, after the first
  // event is in the file under its own name.
  static Expected<std::unique_ptr<Journal>> open(const std::filesystem::path& path,
                                                 std::function<void()> started = {});
  std::string_view name() const override { return "journal"; }
  void report(const Event& event) override;

 private:
  struct FileCloser {
    void operator()(std::FILE* file) const { std::fclose(file); }
  };
  Journal(std::filesystem::path path, std::filesystem::path starting, std::FILE* file,
          std::function<void()> started)
      : path_(std::move(path)), starting_(std::move(starting)), file_(file),
        started_(std::move(started)) {}
  std::filesystem::path path_;
  std::filesystem::path starting_;  // empty once renamed to path_
  std::unique_ptr<std::FILE, FileCloser> file_;
  std::function<void()> started_;
  // Bytes of whole events written: where a failed write is cut back to
  // (kept here, not asked of the file: a system call per event).
  off_t written_ = 0;
};

}  // namespace ranktest::events
