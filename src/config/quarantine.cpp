#include "config/quarantine.h"

#include <fmt/format.h>

#include <ctime>
#include <regex>

namespace ranktest::config {

std::optional<Error> read_quarantine_entry(const toml::table& table, const TableReader& reader,
                                           QuarantineEntry& entry) {
  if (auto error = reader.check_keys(table, {"test", "until", "reason"})) return error;
  entry.place = reader.place_of(table.source());
  const auto text = [&](const char* key, const char* expected) -> Expected<std::string> {
    const auto* node = table.get(key);
    if (!node)
      return reader.error_at(table.source(),
                             fmt::format("this quarantine entry has no '{}' ({}); every entry "
                                         "says test, until and reason",
                                         key, expected));
    if (!node->is_string() || node->value<std::string>()->empty())
      return reader.wrong_type(key, *node, expected);
    return *node->value<std::string>();
  };
  auto test = text("test", "a test id or glob, as --filter takes");
  if (!test) return test.error();
  entry.test = std::move(*test);
  auto reason = text("reason", "why it is quarantined: an issue, a person");
  if (!reason) return reason.error();
  entry.reason = std::move(*reason);
  // A TOML date (until = 2027-01-31) or the same in a string.
  const auto* until = table.get("until");
  if (until && until->is_date()) {
    const auto date = until->value<toml::date>().value();
    entry.until = fmt::format("{:04}-{:02}-{:02}", date.year, date.month, date.day);
    return std::nullopt;
  }
  auto written = text("until", "the last day it holds, \"YYYY-MM-DD\"");
  if (!written) return written.error();
  static const std::regex kDate("[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])");
  if (!std::regex_match(*written, kDate))
    return reader.wrong_type("until", *until, "the last day it holds, \"YYYY-MM-DD\"");
  entry.until = std::move(*written);
  return std::nullopt;
}

std::optional<Error> expired_quarantine(const std::vector<QuarantineEntry>& entries,
                                        const std::string& today) {
  for (const auto& entry : entries)
    if (entry.until < today)  // the same fixed-width form: text order is date order
      return Error{fmt::format(
          "{}: the quarantine of \"{}\" ended on {} ({}); the test counts again: fix it and "
          "remove the entry, or move `until` on if it must stay quarantined",
          entry.place.to_string(), entry.test, entry.until, entry.reason)};
  return std::nullopt;
}

std::string local_date_today() {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  ::localtime_r(&now, &local);
  return fmt::format("{:04}-{:02}-{:02}", local.tm_year + 1900, local.tm_mon + 1, local.tm_mday);
}

}  // namespace ranktest::config
