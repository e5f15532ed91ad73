#include "report/junit_reporter.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <pugixml.hpp>
#include <stdexcept>

#include "frameworks/framework_kind.h"
#include "text/file_tail.h"
#include "process/host_name.h"
#include "text/sanitize.h"

namespace ranktest::report {
namespace {

// The names each framework's own JUnit file gives a test, so that a CI's
// test history carries over from it (FrameworkKind::junit_name); a journal
// without the test's framework is read as gtest's.
frameworks::JunitName junit_name(const events::TestInfo& test) {
  const auto* framework = frameworks::framework_named(test.kind);
  if (!framework) framework = &frameworks::framework_of(SuiteKind::gtest);
  return framework->junit_name(test.name, test.source);
}

// Enough of a failing test's output to read in a CI page; the full log
// stays in the run folder.
constexpr std::size_t kMaxOutputBytes = 256 * 1024;

std::string time_attribute(std::chrono::milliseconds duration) {
  return fmt::format("{:.3f}", duration.count() / 1000.0);
}

std::string xml(std::string_view bytes) { return text::xml_safe(bytes); }

std::string failure_text(const TestResult& result) {
  std::string text;
  for (const auto& failure : result.failures) {
    if (failure.location)
      text += fmt::format("{}:{}\n", failure.location->file, failure.location->line);
    text += failure.text;
    if (!text.empty() && text.back() != '\n') text += '\n';
  }
  if (!result.reason.empty()) text += result.reason + "\n";
  for (const auto& stack : result.stacks)
    text += fmt::format("stack of {} (pid {}): {}\n",
                        stack.rank >= 0 ? fmt::format("rank {}", stack.rank) : "a process",
                        stack.pid, stack.summary);
  return text;
}

std::string first_line(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

std::string output_text(const TestResult& result) {
  if (result.log_path.empty()) return {};
  const auto tail = text::read_file_tail(result.log_path, kMaxOutputBytes);
  std::string out;
  if (tail.skipped)
    out = fmt::format("[ranktest: {} earlier bytes omitted; the whole output "
                      "is in {}]\n",
                      tail.skipped, result.log_path);
  return out + tail.bytes;
}

// The one-line message of a failure: its first line at file:line, or why.
std::string message_of(const TestResult& result) {
  if (!result.failures.empty()) {
    const auto& failure = result.failures.front();
    const auto text = first_line(failure.text);
    return failure.location
               ? fmt::format("{}:{}: {}", failure.location->file,
                             failure.location->line, text)
               : text;
  }
  return result.reason.empty() ? std::string(to_string(result.outcome)) : result.reason;
}

// Earlier failed attempts of a test that was retried, as Maven Surefire
// writes them (Jenkins, GitLab and others read these): flakyFailure /
// flakyError when the test then passed, rerunFailure / rerunError when it
// failed every time.
void add_earlier_attempts(pugi::xml_node testcase, const TestResult& final_result,
                          const std::vector<const events::TestFinished*>& earlier) {
  const bool flaky = final_result.outcome == Outcome::passed;
  for (const auto* attempt : earlier) {
    const auto& result = attempt->result;
    // A fresh process that passed after a forked failure, before the
    // forked re-check: not a failure to list.
    if (!is_failure(result.outcome)) continue;
    const bool assertion = result.outcome == Outcome::failed || result.outcome == Outcome::leaked ||
                           result.outcome == Outcome::child_failed;
    const char* name = flaky ? (assertion ? "flakyFailure" : "flakyError")
                             : (assertion ? "rerunFailure" : "rerunError");
    auto element = testcase.append_child(name);
    element.append_attribute("message") = xml(message_of(result)).c_str();
    element.append_attribute("type") = std::string(to_string(result.outcome)).c_str();
    element.append_child("stackTrace").text() = xml(failure_text(result)).c_str();
    const auto output = output_text(result);
    if (!output.empty()) element.append_child("system-out").text() = xml(output).c_str();
  }
}

void add_result(pugi::xml_node testcase, const TestResult& result,
                const std::vector<const events::TestFinished*>& earlier) {
  switch (result.outcome) {
    case Outcome::passed:
    case Outcome::xpassed:
      add_earlier_attempts(testcase, result, earlier);
      if (!result.suspicious.empty()) {
        std::string note = "ranktest: this passing test may have swallowed a failure:\n";
        for (const auto& line : result.suspicious) note += line + "\n";
        testcase.append_child("system-out").text() = xml(note).c_str();
      }
      return;
    case Outcome::skipped:
    case Outcome::xfailed:  // its reason starts "xfail: ", as pytest's junitxml says
    case Outcome::not_run: {
      auto skipped = testcase.append_child("skipped");
      const auto reason = result.outcome == Outcome::not_run
                              ? "not run: " + result.reason
                              : result.reason;
      skipped.append_attribute("message") = xml(reason).c_str();
      add_earlier_attempts(testcase, result, earlier);  // a retry cut short
      return;
    }
    case Outcome::failed:
    case Outcome::leaked:
    case Outcome::child_failed: {
      auto failure = testcase.append_child("failure");
      failure.append_attribute("message") = xml(message_of(result)).c_str();
      failure.append_attribute("type") = std::string(to_string(result.outcome)).c_str();
      failure.text() = xml(failure_text(result)).c_str();
      break;
    }
    case Outcome::crashed:
    case Outcome::timed_out:
    case Outcome::error:
    case Outcome::interrupted: {
      auto error = testcase.append_child("error");
      error.append_attribute("message") = xml(message_of(result)).c_str();
      error.append_attribute("type") = std::string(to_string(result.outcome)).c_str();
      error.text() = xml(failure_text(result)).c_str();
      break;
    }
  }
  add_earlier_attempts(testcase, result, earlier);
  const auto output = output_text(result);
  if (!output.empty())
    testcase.append_child("system-out").text() = xml(output).c_str();
}

// Whether a verdict is a quarantined test's that did not pass: reported
// skipped (the CI's convention for "ran, does not count"), the failure
// kept in its message and output.
bool quarantined_failure(const events::TestFinished& finished) {
  return finished.quarantined && !ended_cleanly(finished.result.outcome) &&
         finished.result.outcome != Outcome::interrupted;
}

void add_quarantined(pugi::xml_node testcase, const events::TestFinished& finished) {
  const auto& result = finished.result;
  auto skipped = testcase.append_child("skipped");
  skipped.append_attribute("message") =
      xml(fmt::format("quarantined until {} ({}): {}; it {}: {}", finished.quarantined->until,
                      finished.quarantined->reason, finished.quarantined->place,
                      to_string(result.outcome), message_of(result)))
          .c_str();
  auto output = failure_text(result);
  const auto log = output_text(result);
  if (!log.empty()) output += (output.empty() ? "" : "\n") + log;
  if (!output.empty()) testcase.append_child("system-out").text() = xml(output).c_str();
}

struct Tally {
  std::size_t tests = 0, failures = 0, errors = 0, skipped = 0;
  std::chrono::milliseconds time{0};
  void add(const events::TestFinished& finished) {
    const auto& result = finished.result;
    ++tests;
    time += result.duration;
    if (quarantined_failure(finished)) {
      ++skipped;
      return;
    }
    switch (result.outcome) {
      case Outcome::passed:
      case Outcome::xpassed: break;
      case Outcome::skipped:
      case Outcome::xfailed:
      case Outcome::not_run: ++skipped; break;
      case Outcome::failed:
      case Outcome::leaked:
      case Outcome::child_failed: ++failures; break;
      case Outcome::crashed:
      case Outcome::timed_out:
      case Outcome::error:
      case Outcome::interrupted: ++errors; break;
    }
  }
  void write(pugi::xml_node node) const {
    node.append_attribute("tests") = tests;
    node.append_attribute("failures") = failures;
    node.append_attribute("errors") = errors;
    node.append_attribute("skipped") = skipped;
    node.append_attribute("time") = time_attribute(time).c_str();
  }
};

}  // namespace

void JunitReporter::report(const events::Event& event) {
  std::visit([this](const auto& e) { on(e); }, event);
}

void JunitReporter::on(const events::RunStarted& event) { started_ = event.time; }
void JunitReporter::on(const events::TestStarted&) {}
void JunitReporter::on(const events::TestSlow&) {}
void JunitReporter::on(const events::RunWarning&) {}
void JunitReporter::on(const events::TestFinished& event) {
  results_.push_back(event);
}

void JunitReporter::on(const events::RunFinished& event) {
  pugi::xml_document document;
  auto declaration = document.append_child(pugi::node_declaration);
  declaration.append_attribute("version") = "1.0";
  declaration.append_attribute("encoding") = "UTF-8";
  auto root = document.append_child("testsuites");
  root.append_attribute("name") = "ranktest";

  // A test's verdict is its last attempt; the retried ones go inside it.
  std::map<std::string, std::vector<const events::TestFinished*>> retried;
  for (const auto& result : results_)
    if (result.retrying) retried[result.test.id].push_back(&result);
  // Sources in the order their first test finished; tests in finish order.
  std::vector<std::string> order;
  std::map<std::string, std::vector<const events::TestFinished*>> by_source;
  for (const auto& result : results_) {
    if (result.retrying) continue;
    auto& list = by_source[result.test.source];
    if (list.empty()) order.push_back(result.test.source);
    list.push_back(&result);
  }
  std::string host = process::host_name();
  if (host.empty()) host = "localhost";

  Tally all;
  int id = 0;
  for (const auto& source : order) {
    auto suite = root.append_child("testsuite");
    suite.append_attribute("name") = xml(source).c_str();
    Tally tally;
    for (const auto* finished : by_source[source]) tally.add(*finished);
    tally.write(suite);
    suite.append_attribute("timestamp") =
        events::format_time(started_).substr(0, 19).c_str();
    suite.append_attribute("hostname") = xml(host).c_str();
    suite.append_attribute("id") = id++;
    for (const auto* finished : by_source[source]) {
      all.add(*finished);
      const auto names = junit_name(finished->test);
      auto testcase = suite.append_child("testcase");
      testcase.append_attribute("name") = xml(names.name).c_str();
      testcase.append_attribute("classname") = xml(names.classname).c_str();
      testcase.append_attribute("time") = time_attribute(finished->result.duration).c_str();
      if (finished->test.location) {
        testcase.append_attribute("file") = xml(finished->test.location->file).c_str();
        testcase.append_attribute("line") = finished->test.location->line;
      }
      if (quarantined_failure(*finished)) {
        add_quarantined(testcase, *finished);
        continue;
      }
      const auto earlier = retried.find(finished->test.id);
      add_result(testcase, finished->result,
                 earlier == retried.end() ? std::vector<const events::TestFinished*>{}
                                          : earlier->second);
    }
  }
  all.write(root);
  root.attribute("time") = time_attribute(event.duration).c_str();

  std::error_code ignored;
  if (path_.has_parent_path())
    std::filesystem::create_directories(path_.parent_path(), ignored);
  const auto temporary = path_.string() + ".tmp";
  if (!document.save_file(temporary.c_str(), "  ",
                          pugi::format_default,
                          pugi::encoding_utf8))
    throw std::runtime_error(fmt::format("cannot write {}", temporary));
  std::filesystem::rename(temporary, path_);
}

}  // namespace ranktest::report
