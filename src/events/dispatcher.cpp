#include "events/dispatcher.h"

#include <fmt/format.h>

#include <exception>

namespace ranktest::events {

void Dispatcher::add(std::unique_ptr<Reporter> reporter) {
  reporters_.push_back(Entry{std::move(reporter), false});
}

std::optional<std::string> Dispatcher::failure_of(std::string_view name) const {
  for (const auto& entry : reporters_)
    if (entry.failed && entry.reporter->name() == name) return entry.failure;
  return std::nullopt;
}

void Dispatcher::dispatch(const Event& event) {
  for (auto& entry : reporters_) {
    if (entry.failed) continue;
    try {
      entry.reporter->report(event);
    } catch (const std::exception& error) {
      entry.failed = true;
      entry.failure = error.what();
      failures_.push_back(fmt::format("{}: {}", entry.reporter->name(), error.what()));
      fmt::print(errors_, "ranktest: warning: the {} reporter failed and is "
                 "off for the rest of the run: {}\n",
                 entry.reporter->name(), error.what());
    }
  }
}

}  // namespace ranktest::events
