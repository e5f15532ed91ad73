// quarantine = [{ test = "GLOB", until = "2027-01-31", reason = "..." }]:
// known-broken tests that still run and are reported, but cannot fail the
// run, each until a date, so that a quarantine cannot be forgotten.
#pragma once

#include <optional>
#include <string>
#include <toml++/toml.h>
#include <vector>

#include "config/config.h"
#include "config/table_reader.h"
#include "model/expected.h"

namespace ranktest::config {

// Reads one entry of `quarantine` (its place is the table's).
std::optional<Error> read_quarantine_entry(const toml::table& table, const TableReader& reader,
                                           QuarantineEntry& entry);

// The run is refused while an entry's `until` (its last day) is before
// `today` ("YYYY-MM-DD"): the error names the entry's place and test.
std::optional<Error> expired_quarantine(const std::vector<QuarantineEntry>& entries,
                                        const std::string& today);

// Today's date here, "YYYY-MM-DD" (local time: the day the person reads).
std::string local_date_today();

}  // namespace ranktest::config
