// isolation = "worker" for gtest: a worker process runs a share of one
// binary's tests through GoogleTest's own loop, and tells the runner of
// each test's start and end with GoogleTest's built-in result streaming
// (--gtest_stream_result_to=HOST:PORT): one line per event,
// "event=TestStart&name=…", "event=TestPartResult&file=…&line=…&message=…",
// "event=TestEnd&passed=1&elapsed_time=3ms", … (values URL-encoded where
// they may hold '%', '=', '&' or a newline). What is read here is pure: the
// runner owns the socket and the processes (gtest_worker.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ranktest::execute {

struct GtestStreamEvent {
  enum class Kind { suite_start, test_start, part_result, test_end, other } kind = Kind::other;
  std::string name;  // suite_start, test_start: the suite's or the test's own name
  std::string file;  // part_result
  int line = 0;
  std::string message;
  bool passed = false;  // test_end
  std::int64_t elapsed_ms = 0;
};

// Splits the stream into events; a line cut by the end of a read is kept
// until its end comes.
class GtestStreamReader {
 public:
  std::vector<GtestStreamEvent> feed(std::string_view bytes);

 private:
  std::string buffered_;
};

GtestStreamEvent parse_gtest_stream_line(std::string_view line);

// One test as the stream told it, until its end.
struct GtestStreamedTest {
  std::string suite;
  std::string test;
  std::string name;  // "Suite.Test"
  struct Part {
    std::string file;
    int line = 0;
    std::string message;
    // The stream says nothing of a part's type (TestPartResult carries
    // none): what GoogleTest's printer wrote for it tells
    // (classify_gtest_parts); a failure until then.
    enum class Kind { failure, skip, success } kind = Kind::failure;
  };
  std::vector<Part> parts;  // its part results: failures, a skip, successes
  bool ended = false;
  bool passed = false;
  std::int64_t elapsed_ms = 0;
};

// Tells each part of a test that did not pass for a failure, a skip or a
// success (SUCCEED(), a success any code reported) from what GoogleTest's
// printer wrote in `log`, the test's slice of the worker's log: it prints
// a failure as "<file>:<line>: Failure\n<message>" and a skip as
// "...: Skipped\n<message>", and never a success. A test that passed has
// only successes. Where the printer wrote none of the parts (a custom
// main replaced it), every part stays a failure, as the stream alone
// would say.
void classify_gtest_parts(GtestStreamedTest& test, std::string_view log);

// Whether any part is a failure / a skip (after classify_gtest_parts).
bool has_part(const GtestStreamedTest& test, GtestStreamedTest::Part::Kind kind);

// The JSON report GoogleTest would have written for this one test
// (--gtest_output=json), so it is read as every gtest test's is: its
// failure parts as failures, its skip's message. `skipped`: its log says
// it was skipped (the stream does not). `environment`: failures of the
// global test environment (a ::testing::Environment's SetUp or TearDown)
// streamed outside any test, in the suite GoogleTest's own report puts
// them in ("NonTestSuiteFailure").
std::string gtest_report_for(const GtestStreamedTest& test, bool skipped,
                             const std::vector<GtestStreamedTest::Part>& environment = {});

// The line GoogleTest's printer writes when a test starts.
std::string gtest_run_line(const std::string& name);
// Whether GoogleTest's printer printed a skip's part result ("file:line:
// Skipped") and no failure's in this part of a test's output.
bool gtest_log_says_skipping(std::string_view log);
// Whether GoogleTest's printer said the test was skipped.
bool gtest_log_says_skipped(std::string_view log, const std::string& name);

}  // namespace ranktest::execute
