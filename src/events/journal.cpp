#include "events/journal.h"

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "events/event_json.h"

namespace ranktest::events {

Expected<std::unique_ptr<Journal>> Journal::open(
    const std::filesystem::path& path) {
  std::FILE* file = std::fopen(path.c_str(), "ae");
  if (!file)
    return Error{path.string() + ": cannot write the event journal: " +
                 std::strerror(errno)};
  return std::unique_ptr<Journal>(new Journal(path, file));
}

void Journal::report(const Event& event) {
  const std::string line = to_json(event).dump() + "\n";
  if (std::fwrite(line.data(), 1, line.size(), file_.get()) != line.size() ||
      std::fflush(file_.get()) != 0)
    throw std::runtime_error(path_.string() + ": " + std::strerror(errno));
}

}  // namespace ranktest::events
