#include "report/json_lines_reporter.h"

#include <fmt/format.h>

#include "events/event_json.h"

namespace ranktest::report {

void JsonLinesReporter::report(const events::Event& event) {
  fmt::print(out_, "{}\n", events::to_json(event).dump());
  std::fflush(out_);
}

}  // namespace ranktest::report
