#include "execute/suspicious_output.h"

#include <fstream>

#include "text/sanitize.h"

namespace ranktest::execute {
namespace {
constexpr std::uintmax_t kWhole = 8u << 20;
constexpr std::size_t kPart = 4u << 20;
}  // namespace

std::vector<std::string> find_signatures(std::string_view output,
                                         const std::vector<std::string>& signatures,
                                         std::size_t limit) {
  std::vector<std::string> found;
  while (!output.empty() && found.size() < limit) {
    const auto newline = output.find('\n');
    const auto line = output.substr(0, newline);
    for (const auto& signature : signatures)
      if (!signature.empty() && line.find(signature) != std::string_view::npos) {
        found.push_back(text::truncate_utf8(line, 300));
        break;
      }
    if (newline == std::string_view::npos) break;
    output.remove_prefix(newline + 1);
  }
  return found;
}

std::vector<std::string> find_signatures_in_log(const std::filesystem::path& log,
                                                const std::vector<std::string>& signatures) {
  if (signatures.empty() || log.empty()) return {};
  std::error_code error;
  const auto size = std::filesystem::file_size(log, error);
  if (error) return {};
  std::ifstream in(log, std::ios::binary);
  const auto read = [&](std::size_t bytes) {
    std::string part(bytes, '\0');
    in.read(part.data(), static_cast<std::streamsize>(bytes));
    part.resize(static_cast<std::size_t>(in.gcount()));
    return part;
  };
  if (size <= kWhole) return find_signatures(read(static_cast<std::size_t>(size)), signatures);
  auto found = find_signatures(read(kPart), signatures);
  in.seekg(-static_cast<std::streamoff>(kPart), std::ios::end);
  for (auto& line : find_signatures(read(kPart), signatures, 3 - std::min<std::size_t>(3, found.size())))
    found.push_back(std::move(line));
  return found;
}

}  // namespace ranktest::execute
