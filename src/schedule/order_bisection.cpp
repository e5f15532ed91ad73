#include "schedule/order_bisection.h"

#include <fmt/format.h>

namespace ranktest::schedule {

std::string last_names(const std::vector<std::string>& names, std::size_t most) {
  std::string text = names.size() > most ? "…" : "";
  for (std::size_t i = names.size() > most ? names.size() - most : 0; i < names.size(); ++i)
    text += (text.empty() ? "" : ", ") + names[i];
  return text;
}

std::string tests_count(std::size_t n) { return fmt::format("{} test{}", n, n == 1 ? "" : "s"); }

OrderBisection::OrderBisection(std::vector<std::string> ran_before, Clock::time_point now)
    : ran_before_(std::move(ran_before)), suspects_(ran_before_), trying_(ran_before_),
      since_(now) {}

// Down to one suspect: found. Else the next run tries the first half.
void OrderBisection::narrow(std::optional<std::string>& found) {
  if (suspects_.size() == 1) {
    found = fmt::format("{} makes it fail (it fails after that test alone)", suspects_.front());
    return;
  }
  trying_.assign(suspects_.begin(), suspects_.begin() + suspects_.size() / 2);
  second_half_ = false;
}

// The runs that confirm what narrowing found: the test fails after the
// suspects again, then passes alone again.
OrderBisection::Step OrderBisection::confirm(bool failed, bool stop) {
  const auto suspects = fmt::format("{} ({})", suspects_.size() == 1 ? "that test" : tests_count(suspects_.size()),
                                    last_names(suspects_));
  if (stage_ == Stage::after) {
    if (!failed)
      return Step{Step::Kind::flaky,
                  fmt::format("narrowing down pointed at {}, but it passed after {} again",
                              last_names(suspects_), suspects_.size() == 1 ? "it" : "them")};
    if (stop)
      return Step{Step::Kind::found, found_ + " (not confirmed alone: the run stopped)"};
    stage_ = Stage::alone;
    trying_.clear();
    return Step{Step::Kind::again,
                fmt::format("failed after {} again; runs again alone in a new worker, to confirm",
                            suspects)};
  }
  if (failed)
    return Step{Step::Kind::failing,
                fmt::format("narrowing down pointed at {}, but it failed alone in a new worker "
                            "too: no earlier test makes it fail",
                            last_names(suspects_))};
  return Step{Step::Kind::found,
              found_ + "; confirmed: it failed after " +
                  (suspects_.size() == 1 ? "it" : "them") + " again and passed alone again"};
}

OrderBisection::Step OrderBisection::after_run(bool failed, bool stop, Clock::time_point now,
                                               std::chrono::milliseconds limit) {
  ++runs_;
  if (stage_ != Stage::narrowing) return confirm(failed, stop);
  const std::size_t ran = trying_.size();
  // Passed after the same tests: not their doing, a flaky failure.
  if (!replayed_ && !failed) return Step{Step::Kind::flaky, {}};
  std::optional<std::string> found;
  if (!replayed_) {
    replayed_ = true;
    narrow(found);
  } else if (failed) {
    suspects_ = trying_;
    narrow(found);
  } else if (!second_half_) {
    trying_.assign(suspects_.begin() + suspects_.size() / 2, suspects_.end());
    second_half_ = true;
  } else {
    found = fmt::format("it fails after {} of them ({}) but after neither half alone",
                        tests_count(suspects_.size()), last_names(suspects_));
  }
  // Bounded: about two runs per halving, and `limit` in all.
  std::size_t halvings = 0;
  for (std::size_t n = ran_before_.size(); n > 1; n = (n + 1) / 2) ++halvings;
  if (!found && (stop || runs_ >= static_cast<int>(2 * halvings + 2) || now - since_ >= limit))
    found = fmt::format("narrowed down to {1} of them ({2}) in {0} run{3}", runs_,
                        tests_count(suspects_.size()), last_names(suspects_),
                        runs_ == 1 ? "" : "s");
  if (found && stop) return Step{Step::Kind::found, *found + " (not confirmed: the run stopped)"};
  if (found) {
    // Named only once confirmed: the test fails after them again.
    found_ = *found;
    stage_ = Stage::after;
    trying_ = suspects_;
    return Step{Step::Kind::again,
                fmt::format("{} after {} of the {} its worker ran before it; narrowed down to {} "
                            "({}): runs again after {}, then alone, to confirm",
                            failed ? "failed" : "passed",
                            ran == ran_before_.size() ? std::string("all") : std::to_string(ran),
                            tests_count(ran_before_.size()),
                            tests_count(suspects_.size()), last_names(suspects_),
                            suspects_.size() == 1 ? "it" : "them")};
  }
  return Step{Step::Kind::again,
              fmt::format("{} after {} {} its worker ran before it; runs again after {} of them",
                          failed ? "failed" : "passed",
                          ran == ran_before_.size() ? "the" : fmt::format("{} of the", ran),
                          tests_count(ran_before_.size()), trying_.size())};
}

}  // namespace ranktest::schedule
