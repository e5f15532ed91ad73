#include "execute/output_limit.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sys/stat.h>

#include "config/byte_size.h"
#include "process/temporary_directory.h"
#include "text/file_tail.h"

namespace ranktest {
namespace {

TEST(ByteSize, UnitsAndPlainBytes) {
  EXPECT_EQ(config::parse_size("100MiB"), 100ull << 20);
  EXPECT_EQ(config::parse_size("64MB"), 64'000'000u);
  EXPECT_EQ(config::parse_size("512KiB"), 512u << 10);
  EXPECT_EQ(config::parse_size("1GB"), 1'000'000'000u);
  EXPECT_EQ(config::parse_size("4096"), 4096u);
  EXPECT_FALSE(config::parse_size("lots"));
  EXPECT_FALSE(config::parse_size("5 MB"));
  EXPECT_FALSE(config::parse_size("-1"));
}

TEST(OutputLimit, KeepsHeadAndTailWithAMarker) {
  auto dir = process::TemporaryDirectory::create("ranktest-limit-");
  ASSERT_TRUE(dir);
  const auto log = dir->path() / "output.log";
  {
    std::ofstream out(log);
    out << "HEAD\n" << std::string(1 << 20, 'x') << "\nTAIL\n";
  }
  // While running: the middle's blocks are freed, the size stays.
  const auto size = std::filesystem::file_size(log);
  execute::release_middle(log, 64 * 1024);
  EXPECT_EQ(std::filesystem::file_size(log), size);
  struct stat info {};
  stat(log.c_str(), &info);
  EXPECT_LT(static_cast<std::uint64_t>(info.st_blocks) * 512, size) << "no hole punched";
  // At the end: head, marker, tail.
  EXPECT_EQ(execute::keep_head_and_tail(log, 64 * 1024), size - 64 * 1024);
  const auto text = text::read_file(log);
  EXPECT_TRUE(text.starts_with("HEAD\n"));
  EXPECT_TRUE(text.ends_with("\nTAIL\n"));
  EXPECT_NE(text.find("bytes of output dropped here"), std::string::npos);
  EXPECT_EQ(execute::keep_head_and_tail(log, 0), 0u);  // 0: no limit
}

}  // namespace
}  // namespace ranktest
