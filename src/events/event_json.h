#pragma once

#include <nlohmann/json.hpp>
#include <optional>

#include "events/event.h"

namespace ranktest::events {

// The JSON-lines form (keys in a fixed order, "event" first) of an event, as docs/events.md describes it. Strings
// are valid UTF-8 whatever the test printed.
nlohmann::ordered_json to_json(const Event& event);

// The kind name of an event as it appears in JSON: "run-started", ...
std::string_view kind_name(const Event& event);

// Reads back one line of events.jsonl; nullopt for an unknown kind or a
// line that is not an event (such as the partial last line of a journal
// whose writer was killed).
std::optional<Event> event_from_json(const nlohmann::json& json);

}  // namespace ranktest::events
