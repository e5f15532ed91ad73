// --message-format json: the run's events on stdout, one JSON object per
// line, exactly as the journal has them (schema in docs/events.md).
#pragma once

#include <cstdio>

#include "events/reporter.h"

namespace ranktest::report {

class JsonLinesReporter final : public events::Reporter {
 public:
  explicit JsonLinesReporter(std::FILE* out) : out_(out) {}
  std::string_view name() const override { return "json"; }
  void report(const events::Event& event) override;

 private:
  std::FILE* out_;
};

}  // namespace ranktest::report
