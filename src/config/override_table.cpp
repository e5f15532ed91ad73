// One [[override]] of ranktest.toml: settings for the tests a filter selects.
#include <fmt/format.h>

#include "config/config_tables.h"

namespace ranktest::config {

std::optional<Error> read_override(const toml::table& table,
                                   const TableReader& reader,
                                   Override& entry) {
  if (auto error = reader.check_keys(table, KnownKeys::override_table()))
    return error;
  entry.place = reader.place_of(table.source());
  const auto* filter = table.get("filter");
  if (!filter)
    return reader.error_at(table.source(),
                           "[[override]] needs 'filter', e.g. filter = "
                           "\"Suite.*\"");
  if (!filter->is_string()) return reader.wrong_type("filter", *filter, "a string");
  entry.filter = filter->value<std::string>().value();
  if (const auto* node = table.get("timeout")) {
    auto value = reader.duration("timeout", *node, true);
    if (!value) return value.error();
    entry.settings.timeout = *value;
  }
  if (const auto* node = table.get("start-timeout")) {
    auto value = reader.duration("start-timeout", *node, true);
    if (!value) return value.error();
    entry.settings.start_timeout = *value;
  }
  if (const auto* node = table.get("slow")) {
    auto value = reader.duration("slow", *node, true);
    if (!value) return value.error();
    entry.settings.slow = *value;
  }
  if (const auto* node = table.get("ranks")) {
    const auto ranks = reader.integer("ranks", *node, 1, 1024);
    if (!ranks) return ranks.error();
    entry.settings.ranks = *ranks;
  }
  if (const auto* node = table.get("devices")) {
    const auto* kinds = node->as_table();
    if (!kinds)
      return reader.wrong_type("devices", *node,
                               "a table of counts, e.g. devices = { cuda = 2 }");
    std::map<std::string, int> devices;
    for (const auto& [kind, count] : *kinds) {
      const auto value = count.value<int64_t>();
      if (!count.is_integer() || *value < 0 || *value > 4096)
        return reader.wrong_type(fmt::format("devices.{}", kind.str()), count,
                                 "a count from 0 to 4096");
      if (*value > 0) devices[std::string(kind.str())] = static_cast<int>(*value);
    }
    entry.settings.devices = std::move(devices);
  }
  if (const auto* node = table.get("exclusive")) {
    if (!node->is_boolean()) return reader.wrong_type("exclusive", *node, "true or false");
    entry.settings.exclusive = node->value<bool>().value();
  }
  if (const auto* node = table.get("leak")) {
    const auto value = node->value<std::string>();
    if (!node->is_string() || (*value != "fail" && *value != "warn"))
      return reader.wrong_type("leak", *node, "\"fail\" or \"warn\"");
    entry.settings.leak_is_failure = *value == "fail";
  }
  if (const auto* node = table.get("labels")) {
    auto labels = reader.strings("labels", *node);
    if (!labels) return labels.error();
    entry.settings.labels = std::move(*labels);
  }
  if (auto error = reader.limits(table, entry.settings)) return error;
  return std::nullopt;
}

}  // namespace ranktest::config
