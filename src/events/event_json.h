#pragma once

#include <nlohmann/json.hpp>

#include "events/event.h"

namespace ranktest::events {

// The JSON-lines form (keys in a fixed order, "event" first) of an event, as docs/events.md describes it. Strings
// are valid UTF-8 whatever the test printed.
nlohmann::ordered_json to_json(const Event& event);

// The kind name of an event as it appears in JSON: "run-started", ...
std::string_view kind_name(const Event& event);

}  // namespace ranktest::events
