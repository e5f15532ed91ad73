#pragma once

#include <string_view>

#include "events/event.h"

namespace ranktest::events {

// A consumer of the event stream. Implementations std::visit the event with
// one handler per kind and no catch-all. A reporter that throws is recorded
// and dropped; the others go on.
class Reporter {
 public:
  virtual ~Reporter() = default;
  virtual std::string_view name() const = 0;
  virtual void report(const Event& event) = 0;
};

}  // namespace ranktest::events
