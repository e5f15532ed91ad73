#include "execute/run_folder.h"

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>
#include <regex>

namespace ranktest::execute {
namespace {

// FNV-1a: stable across runs and machines, unlike std::hash.
std::uint64_t stable_hash(std::string_view text) {
  std::uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

}  // namespace

std::string safe_file_name(std::string_view test_id) {
  constexpr std::size_t kMaxStem = 100;
  std::string stem;
  for (unsigned char c : test_id) {
    if (stem.size() >= kMaxStem) break;
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                       (c >= '0' && c <= '9') || c == '.' || c == '-' ||
                       c == '_';
    if (plain)
      stem += static_cast<char>(c);
    else if (stem.empty() || stem.back() != '_')
      stem += '_';
  }
  // A leading dot would hide the folder and "." or ".." would escape it.
  while (!stem.empty() && stem.front() == '.') stem.front() = '_';
  return fmt::format("{}-{:08x}", stem,
                     static_cast<std::uint32_t>(stable_hash(test_id)));
}

std::string make_run_id(std::chrono::system_clock::time_point now) {
  std::random_device entropy;
  const auto seconds = std::chrono::floor<std::chrono::seconds>(now);
  return fmt::format("{:%Y%m%d-%H%M%S}-{:04x}", seconds,
                     (entropy() ^ static_cast<unsigned>(getpid())) & 0xFFFF);
}

bool is_run_id(std::string_view name) {
  static const std::regex shape("[0-9]{8}-[0-9]{6}-[0-9a-f]{4}");
  return std::regex_match(name.begin(), name.end(), shape);
}

Expected<RunFolder> RunFolder::create(const std::filesystem::path& state_dir,
                                      const std::string& run_id) {
  // Absolute, so the paths in events and reports mean the same thing from
  // any folder (tests may change their working directory).
  const auto runs = std::filesystem::absolute(state_dir).lexically_normal() / "runs";
  const auto path = runs / run_id;
  std::error_code error;
  std::filesystem::create_directories(path / "tests", error);
  if (error)
    return Error{fmt::format("{}: cannot create the run folder: {}; set "
                             "state-dir (or --state-dir) to a writable place",
                             path.string(), error.message())};
  return RunFolder(path, run_id);
}

void RunFolder::point_latest_here() const {
  // A symlink beside "latest", renamed over it.
  const auto runs = path_.parent_path();
  const auto temporary = runs / fmt::format(".latest-{}", run_id_);
  std::error_code error;
  std::filesystem::create_directory_symlink(run_id_, temporary, error);
  if (!error) std::filesystem::rename(temporary, runs / "latest", error);
  if (error) std::filesystem::remove(temporary, error);
}

Expected<std::filesystem::path> RunFolder::attempt_folder(
    std::string_view test_id, int attempt) const {
  const auto test_folder = path_ / "tests" / safe_file_name(test_id);
  const auto folder = test_folder / fmt::format("attempt-{}", attempt);
  // Two mkdirs where tests/ exists (the usual case, once per test):
  // create_directories would look at every level first.
  const auto made = [](const std::filesystem::path& path) {
    return ::mkdir(path.c_str(), 0777) == 0 || errno == EEXIST;
  };
  if (made(test_folder) && made(folder)) return folder;
  std::error_code error;
  std::filesystem::create_directories(folder, error);
  if (error)
    return Error{fmt::format("{}: cannot create the test's folder: {}",
                             folder.string(), error.message())};
  return folder;
}

Expected<std::filesystem::path> RunFolder::private_tmpdir(const std::filesystem::path& attempt) {
  const auto folder = attempt / "tmp";
  std::error_code error;
  std::filesystem::create_directory(folder, error);
  if (!error)
    std::filesystem::permissions(folder, std::filesystem::perms::owner_all,
                                 std::filesystem::perm_options::replace, error);
  if (error)
    return Error{fmt::format("{}: cannot create the test's TMPDIR (tmpdir = \"private\"): {}",
                             folder.string(), error.message())};
  return folder;
}

std::optional<std::string> RunFolder::cannot_write() const {
  const auto probe = path_ / fmt::format(".space-probe-{}", ::getpid());
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return std::string(std::strerror(errno));
  const std::string block(64 * 1024, '\0');
  std::optional<std::string> why;
  for (std::size_t written = 0; written < block.size() && !why;) {
    const auto n = ::write(fd, block.data() + written, block.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) why = std::strerror(n < 0 ? errno : ENOSPC);
    else written += static_cast<std::size_t>(n);
  }
  ::close(fd);
  ::unlink(probe.c_str());
  return why;
}

}  // namespace ranktest::execute
