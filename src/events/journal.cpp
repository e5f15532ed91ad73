#include "events/journal.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "events/event_json.h"

namespace ranktest::events {

Expected<std::unique_ptr<Journal>> Journal::open(const std::filesystem::path& path,
                                                 std::function<void()> started) {
  auto starting = path.parent_path() / ("." + path.filename().string() + ".starting");
  std::FILE* file = std::fopen(starting.c_str(), "we");
  if (!file)
    return Error{path.string() + ": cannot write the event journal: " +
                 std::strerror(errno)};
  return std::unique_ptr<Journal>(
      new Journal(path, std::move(starting), file, std::move(started)));
}

void Journal::report(const Event& event) {
  const std::string line = to_json(event).dump() + "\n";
  const int fd = ::fileno(file_.get());
  if (std::fwrite(line.data(), 1, line.size(), file_.get()) != line.size() ||
      std::fflush(file_.get()) != 0) {
    const int error = errno;
    // A line cut by a full disk would make the journal unreadable from
    // there: take the part that was written back, so it ends at the last
    // whole event.
    std::clearerr(file_.get());
    (void)::ftruncate(fd, written_);
    throw std::runtime_error(path_.string() + ": " + std::strerror(error));
  }
  written_ += static_cast<off_t>(line.size());
  if (starting_.empty()) return;
  // The open file keeps its place through the rename.
  std::error_code error;
  std::filesystem::rename(starting_, path_, error);
  if (error) throw std::runtime_error(path_.string() + ": " + error.message());
  starting_.clear();
  if (started_) started_();
}

}  // namespace ranktest::events
