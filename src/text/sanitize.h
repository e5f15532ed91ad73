// Making whatever bytes a test printed safe for the places we show them.
// A test may print invalid UTF-8, terminal escape sequences, NUL bytes or
// "]]>"; none of that may corrupt a report or a terminal.
#pragma once

#include <string>
#include <string_view>

namespace ranktest::text {

// Valid UTF-8 with every invalid byte written as the four characters "\xNN",
// so nothing is lost and the result is still readable.
std::string repair_utf8(std::string_view bytes);

// Text allowed in an XML 1.0 document: valid UTF-8 without the control
// characters XML forbids (they become "\xNN"; tab, newline and CR stay).
std::string xml_safe(std::string_view bytes);

// JSON text to embed in an HTML <script> element: every '<' written
// \u003c (which JSON reads back as '<'), so nothing in it can close the
// element.
std::string script_safe_json(std::string_view json);

// Text safe to print on a terminal: valid UTF-8 with control characters
// (escape sequences included) written as "\xNN"; tab and newline stay.
std::string terminal_safe(std::string_view bytes);

// `bytes` as a shell word in bash's $'...' quoting: printable UTF-8 as it
// is, every other byte (controls, invalid UTF-8) as \xNN, quote and
// backslash escaped. The shell reads it back as exactly `bytes`.
std::string ansi_c_quoted(std::string_view bytes);

// Cuts `text` to at most `max_bytes` without splitting a UTF-8 sequence,
// marking the cut with "…".
std::string truncate_utf8(std::string_view text, std::size_t max_bytes);

// Keeps the last `max_bytes` of `text`, starting after a newline where one
// is near, marking the cut with "…\n".
std::string keep_end_utf8(std::string_view text, std::size_t max_bytes);

}  // namespace ranktest::text
