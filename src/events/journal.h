#pragma once

#include <cstdio>
#include <filesystem>
#include <memory>

#include "events/reporter.h"
#include "model/expected.h"

namespace ranktest::events {

// Appends every event to <run folder>/events.jsonl and flushes it at once,
// so the file holds every finished test even if the runner is killed.
class Journal final : public Reporter {
 public:
  // Opens (creates) the file for appending.
  static Expected<std::unique_ptr<Journal>> open(const std::filesystem::path& path);
  std::string_view name() const override { return "journal"; }
  void report(const Event& event) override;

 private:
  struct FileCloser {
    void operator()(std::FILE* file) const { std::fclose(file); }
  };
  Journal(std::filesystem::path path, std::FILE* file)
      : path_(std::move(path)), file_(file) {}
  std::filesystem::path path_;
  std::unique_ptr<std::FILE, FileCloser> file_;
};

}  // namespace ranktest::events
