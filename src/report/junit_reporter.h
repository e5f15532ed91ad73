// JUnit XML for CI systems: one <testsuite> per source (binary), one
// <testcase> per test. Valid against tests/schemas/junit.xsd whatever bytes
// the tests printed. Written when the run finishes, atomically.
#pragma once

#include <filesystem>
#include <vector>

#include "events/reporter.h"

namespace ranktest::report {

class JunitReporter final : public events::Reporter {
 public:
  explicit JunitReporter(std::filesystem::path path) : path_(std::move(path)) {}
  std::string_view name() const override { return "junit"; }
  void report(const events::Event& event) override;

 private:
  void on(const events::RunStarted& event);
  void on(const events::TestStarted& event);
  void on(const events::TestSlow& event);
  void on(const events::RunWarning& event);
  void on(const events::TestFinished& event);
  void on(const events::RunFinished& event);

  std::filesystem::path path_;
  events::TimePoint started_;
  std::vector<events::TestFinished> results_;
};

}  // namespace ranktest::report
