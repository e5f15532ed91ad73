#include "text/sanitize.h"

#include <fmt/format.h>

#include <algorithm>

namespace ranktest::text {
namespace {

// Length of the valid UTF-8 sequence starting at bytes[i], or 0 if invalid.
// Rejects overlong forms, surrogates and code points above U+10FFFF.
std::size_t valid_sequence_length(std::string_view bytes, std::size_t i,
                                  char32_t& code_point) {
  const auto byte = [&](std::size_t k) {
    return static_cast<unsigned char>(bytes[k]);
  };
  const unsigned char lead = byte(i);
  std::size_t length;
  char32_t min;
  if (lead < 0x80) {
    code_point = lead;
    return 1;
  } else if ((lead & 0xE0) == 0xC0) {
    length = 2, min = 0x80, code_point = lead & 0x1F;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3, min = 0x800, code_point = lead & 0x0F;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4, min = 0x10000, code_point = lead & 0x07;
  } else {
    return 0;
  }
  if (i + length > bytes.size()) return 0;
  for (std::size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    code_point = (code_point << 6) | (byte(i + k) & 0x3F);
  }
  if (code_point < min || code_point > 0x10FFFF) return 0;
  if (code_point >= 0xD800 && code_point <= 0xDFFF) return 0;
  return length;
}

void append_escaped(std::string& out, unsigned char byte) {
  out += fmt::format("\\x{:02X}", byte);
}

// Walks `bytes`, keeping valid sequences whose code point `keep` accepts and
// escaping every other byte.
template <typename Keep>
std::string rewrite(std::string_view bytes, Keep keep) {
  std::string out;
  out.reserve(bytes.size());
  for (std::size_t i = 0; i < bytes.size();) {
    char32_t code_point = 0;
    const std::size_t length = valid_sequence_length(bytes, i, code_point);
    if (length == 0) {
      append_escaped(out, static_cast<unsigned char>(bytes[i]));
      ++i;
    } else if (!keep(code_point)) {
      for (std::size_t k = 0; k < length; ++k)
        append_escaped(out, static_cast<unsigned char>(bytes[i + k]));
      i += length;
    } else {
      out.append(bytes.substr(i, length));
      i += length;
    }
  }
  return out;
}

}  // namespace

std::string repair_utf8(std::string_view bytes) {
  // Most text (every id and event field of most runs) is ASCII: copied as
  // it is, not a character at a time.
  if (std::all_of(bytes.begin(), bytes.end(),
                  [](char c) { return static_cast<unsigned char>(c) < 0x80; }))
    return std::string(bytes);
  return rewrite(bytes, [](char32_t) { return true; });
}

std::string xml_safe(std::string_view bytes) {
  return rewrite(bytes, [](char32_t c) {
    if (c == '\t' || c == '\n' || c == '\r') return true;
    if (c < 0x20) return false;
    return c != 0xFFFE && c != 0xFFFF;
  });
}

std::string terminal_safe(std::string_view bytes) {
  return rewrite(bytes, [](char32_t c) {
    if (c == '\t' || c == '\n') return true;
    // C0 controls, DEL and the C1 controls (which some terminals obey).
    return c >= 0x20 && c != 0x7F && !(c >= 0x80 && c < 0xA0);
  });
}

std::string ansi_c_quoted(std::string_view bytes) {
  std::string out = "$'";
  for (std::size_t i = 0; i < bytes.size();) {
    char32_t code_point = 0;
    const std::size_t length = valid_sequence_length(bytes, i, code_point);
    const bool printable = length > 0 && code_point >= 0x20 && code_point != 0x7F &&
                           !(code_point >= 0x80 && code_point < 0xA0);
    if (!printable) {
      append_escaped(out, static_cast<unsigned char>(bytes[i]));
      ++i;
      continue;
    }
    if (code_point == '\'' || code_point == '\\') out += '\\';
    out.append(bytes.substr(i, length));
    i += length;
  }
  return out + "'";
}

std::string truncate_utf8(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  std::size_t cut = max_bytes;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80)
    --cut;
  return std::string(text.substr(0, cut)) + "…";
}

std::string keep_end_utf8(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  std::size_t cut = text.size() - max_bytes;
  const auto newline = text.find('\n', cut);
  if (newline != std::string_view::npos && newline + 1 < text.size())
    cut = newline + 1;
  while (cut < text.size() && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80)
    ++cut;
  return "…\n" + std::string(text.substr(cut));
}

std::string script_safe_json(std::string_view json) {
  std::string safe;
  safe.reserve(json.size() + json.size() / 64);
  for (const char c : json) {
    if (c == '<') safe += "\\u003c";
    else safe += c;
  }
  return safe;
}

}  // namespace ranktest::text
