#include "report/live_status.h"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "model/overloaded.h"
#include "text/sanitize.h"

namespace ranktest::report {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kRedrawEvery = std::chrono::milliseconds(250);

// "0:07", "12:31", "1:02:03"
std::string clock_time(Millis time) {
  const auto seconds = std::max<long long>(0, time.count() / 1000);
  if (seconds >= 3600)
    return fmt::format("{}:{:02}:{:02}", seconds / 3600, seconds / 60 % 60, seconds % 60);
  return fmt::format("{}:{:02}", seconds / 60, seconds % 60);
}

// "3.2s", "1m05s"
std::string short_time(Millis time) {
  if (time < std::chrono::minutes(1)) return fmt::format("{:.1f}s", time.count() / 1000.0);
  const auto seconds = time.count() / 1000;
  return fmt::format("{}m{:02}s", seconds / 60, seconds % 60);
}

constexpr std::size_t kShortestName = 12;

// The last `bytes` bytes of `text` at most, led by "…" when cut; never starts
// inside a UTF-8 sequence.
std::string cut_from_left(const std::string& text, std::size_t bytes) {
  constexpr std::string_view kEllipsis = "…";
  if (text.size() <= bytes) return text;
  std::size_t start = text.size() - (bytes - kEllipsis.size());
  while (start < text.size() && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) ++start;
  return std::string(kEllipsis) + text.substr(start);
}

}  // namespace

std::string format_status_line(const Progress& progress, std::size_t width) {
  std::string line = fmt::format(" {}/{}", progress.done, progress.total);
  if (progress.failed) line += fmt::format("  {} failed", progress.failed);
  line += "  " + clock_time(progress.elapsed);
  if (progress.remaining) line += "  ETA " + clock_time(*progress.remaining);
  if (line.size() >= width) return text::truncate_utf8(line, width > 1 ? width - 1 : 0);
  auto running = progress.running;
  std::stable_sort(running.begin(), running.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  for (std::size_t i = 0; i < running.size(); ++i) {
    const auto lead = i == 0 ? "  running: " : ", ";
    auto name = text::terminal_safe(running[i].first);
    const auto time = " " + short_time(running[i].second);
    const auto more = i + 1 < running.size()
                          ? fmt::format(", +{} more", running.size() - i - 1)
                          : std::string();
    // Room for this one and, if others follow, for saying how many.
    const auto fixed = line.size() + std::strlen(lead) + time.size() + more.size();
    if (fixed + name.size() < width) {
      line += lead + name + time;
      continue;
    }
    // The longest-running test is always named: by the end of its id, the
    // part that tells tests apart.
    if (i == 0 && fixed + kShortestName < width) {
      line += lead + cut_from_left(name, width - fixed - 1) + time + more;
      break;
    }
    const auto rest = fmt::format("{}+{} running", i == 0 ? "  " : ", ", running.size() - i);
    if (line.size() + rest.size() < width) line += rest;
    break;
  }
  return line;
}

std::optional<Millis> estimate_remaining(const WorkLeft& work,
                                         std::optional<Millis> mean_expected) {
  if (work.pending_unknown > 0 && !mean_expected) return std::nullopt;
  Millis total = work.pending_known;
  if (work.pending_unknown) total += *mean_expected * static_cast<long>(work.pending_unknown);
  Millis longest{0};
  for (const auto& [elapsed, expected] : work.running) {
    const auto whole = expected ? expected : mean_expected;
    if (!whole) return std::nullopt;
    // Past its expected time a test's end is anyone's guess: none is counted.
    const auto left = std::max(Millis{0}, *whole - elapsed);
    total += left;
    longest = std::max(longest, left);
  }
  // The work spread over the slots, but no sooner than the longest running
  // test can end.
  return std::max(total / std::max(1, work.jobs), longest);
}

std::size_t terminal_width(std::FILE* out) {
  winsize size{};
  if (ioctl(fileno(out), TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return 80;
}

LiveStatus::LiveStatus(std::FILE* out, bool ansi, std::map<std::string, Millis> expected)
    : out_(out), ansi_(ansi), expected_(std::move(expected)) {
  if (!expected_.empty()) {
    Millis sum{0};
    for (const auto& [id, duration] : expected_) sum += duration;
    mean_expected_ = sum / static_cast<long>(expected_.size());
  }
  ticker_ = std::thread([this] { tick(); });
}

LiveStatus::~LiveStatus() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    if (drawn_) erase();
    std::fflush(out_);
  }
  wake_.notify_all();
  ticker_.join();
}

void LiveStatus::tick() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    wake_.wait_for(lock, kRedrawEvery);
    if (stopping_ || !running_run_) continue;
    draw();
    std::fflush(out_);
  }
}

std::unique_lock<std::mutex> LiveStatus::begin_output() {
  std::unique_lock lock(mutex_);
  if (drawn_) erase();
  return lock;
}

void LiveStatus::end_output(const events::Event& event, std::unique_lock<std::mutex>& lock) {
  const auto now = Clock::now();
  std::visit(
      Overloaded{
          [&](const events::RunStarted& e) {
            running_run_ = true;
            run_start_ = now;
            total_ = e.tests_to_run;
            jobs_ = std::max(1, e.jobs);
            for (const auto& test : e.planned) {
              if (!pending_.insert(test.id).second) continue;
              const auto it = expected_.find(test.id);
              if (it != expected_.end()) pending_known_ += it->second;
              else ++pending_unknown_;
            }
          },
          [&](const events::TestStarted& e) {
            if (pending_.erase(e.test.id)) {
              const auto it = expected_.find(e.test.id);
              if (it != expected_.end()) pending_known_ -= it->second;
              else --pending_unknown_;
            }
            running_[{e.test.id, e.attempt}] = now;
          },
          [](const events::TestSlow&) {}, [](const events::RunWarning&) {},
          [&](const events::TestFinished& e) {
            running_.erase({e.test.id, e.attempt});
            // Skipped, never started, or to be retried: not (yet) in the count.
            if (e.attempt == 0 || e.retrying) return;
            ++done_;
            if (is_failure(e.result.outcome)) ++failed_;
            finished_sum_ += e.result.duration;
            ++finished_count_;
          },
          [&](const events::RunFinished&) { running_run_ = false; }},
      event);
  if (running_run_) draw();
  std::fflush(out_);
  lock.unlock();
}

Progress LiveStatus::progress() const {
  const auto now = Clock::now();
  Progress progress;
  progress.done = done_;
  progress.total = std::max(total_, done_);
  progress.failed = failed_;
  progress.elapsed = std::chrono::duration_cast<Millis>(now - run_start_);
  WorkLeft work{pending_known_, pending_unknown_, {}, jobs_};
  for (const auto& [key, started] : running_) {
    const auto elapsed = std::chrono::duration_cast<Millis>(now - started);
    progress.running.emplace_back(key.first, elapsed);
    const auto it = expected_.find(key.first);
    work.running.emplace_back(elapsed, it == expected_.end() ? std::nullopt
                                                             : std::optional<Millis>(it->second));
  }
  auto mean = mean_expected_;
  if (!mean && finished_count_) mean = finished_sum_ / static_cast<long>(finished_count_);
  progress.remaining = estimate_remaining(work, mean);
  return progress;
}

void LiveStatus::erase() {
  if (ansi_) std::fputs("\r\x1b[K", out_);
  else fmt::print(out_, "\r{:{}}\r", "", drawn_width_);
  drawn_ = false;
  drawn_width_ = 0;
}

// Drawn over the previous line in place: no flicker between ticks.
void LiveStatus::draw() {
  const auto line = format_status_line(progress(), terminal_width(out_));
  if (ansi_) {
    fmt::print(out_, "\r{}\x1b[K", line);
  } else {
    const auto pad = drawn_width_ > line.size() ? drawn_width_ - line.size() : 0;
    fmt::print(out_, "\r{}{:{}}", line, "", pad);
  }
  drawn_ = true;
  drawn_width_ = line.size();
}

}  // namespace ranktest::report
