// A live line on a terminal while listing binaries takes more than a
// moment: "ranktest: listing test binaries: 12 of 97", rewritten in place
// and erased once listing is done. Nothing where stderr is not a terminal
// (CI logs keep no half lines) or where listing is quick.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdio>

namespace ranktest::app {

class ListingProgress {
 public:
  explicit ListingProgress(std::FILE* out);
  ~ListingProgress();  // erases the line if one was drawn
  ListingProgress(const ListingProgress&) = delete;
  ListingProgress& operator=(const ListingProgress&) = delete;

  void update(std::size_t listed, std::size_t to_list);

 private:
  std::FILE* out_;
  bool terminal_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point started_;
};

}  // namespace ranktest::app
