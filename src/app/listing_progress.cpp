#include "app/listing_progress.h"

#include <fmt/format.h>
#include <unistd.h>

namespace ranktest::app {
namespace {
// Listing quicker than this draws nothing.
constexpr auto kQuiet = std::chrono::seconds(1);
}  // namespace

ListingProgress::ListingProgress(std::FILE* out)
    : out_(out), terminal_(::isatty(::fileno(out)) != 0), started_(std::chrono::steady_clock::now()) {}

ListingProgress::~ListingProgress() {
  if (!drawn_) return;
  fmt::print(out_, "\r\033[K");
  std::fflush(out_);
}

void ListingProgress::update(std::size_t listed, std::size_t to_list) {
  if (!terminal_ || std::chrono::steady_clock::now() - started_ < kQuiet) return;
  fmt::print(out_, "\r\033[Kranktest: listing test binaries: {} of {}", listed, to_list);
  std::fflush(out_);
  drawn_ = true;
}

}  // namespace ranktest::app
