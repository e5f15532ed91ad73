#pragma once

#include <cstdio>
#include <memory>
#include <optional>
#include <string_view>
#include <string>
#include <vector>

#include "events/reporter.h"

namespace ranktest::events {

// Hands each event to every reporter, in registration order, on the calling
// thread. A reporter that fails is reported once on `errors` and skipped
// from then on; the run and the other reporters go on.
class Dispatcher {
 public:
  explicit Dispatcher(std::FILE* errors) : errors_(errors) {}
  void add(std::unique_ptr<Reporter> reporter);
  void dispatch(const Event& event);
  // One line per reporter that failed, e.g. "junit: disk full".
  const std::vector<std::string>& failures() const { return failures_; }
  // The failure of the reporter called `name` ("journal"), if it failed.
  std::optional<std::string> failure_of(std::string_view name) const;

 private:
  struct Entry {
    std::unique_ptr<Reporter> reporter;
    bool failed = false;
    std::string failure = {};  // its error, once failed
  };
  std::vector<Entry> reporters_;
  std::vector<std::string> failures_;
  std::FILE* errors_;
};

}  // namespace ranktest::events
