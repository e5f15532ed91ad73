#include "schedule/device_inventory.h"

#include <gtest/gtest.h>

#include <fstream>

#include "process/temporary_directory.h"

namespace ranktest::schedule {
namespace {

TEST(DeviceInventory, DetectsGpusAndTpuChipsFromDeviceFiles) {
  auto dev = process::TemporaryDirectory::create("ranktest-dev-");
  ASSERT_TRUE(dev);
  for (const char* name : {"nvidia0", "nvidia10", "nvidia2", "nvidiactl", "nvidia-uvm",
                           "accel1", "accel0", "null"})
    std::ofstream(dev->path() / name);
  const auto found = detect_devices(dev->path());
  EXPECT_EQ(found.at("cuda"), (std::vector<std::string>{"0", "2", "10"}));
  EXPECT_EQ(found.at("tpu"), (std::vector<std::string>{"0", "1"}));
}

TEST(DeviceInventory, VfioGroupsAreTpuChipsWhenThereIsNoAccel) {
  auto dev = process::TemporaryDirectory::create("ranktest-dev-");
  ASSERT_TRUE(dev);
  std::filesystem::create_directory(dev->path() / "vfio");
  for (const char* name : {"0", "1", "vfio"}) std::ofstream(dev->path() / "vfio" / name);
  EXPECT_EQ(detect_devices(dev->path()).at("tpu"), (std::vector<std::string>{"0", "1"}));
  EXPECT_TRUE(detect_devices(dev->path() / "missing").empty());
}

TEST(DeviceInventory, ConfigurationWinsPerKind) {
  const auto merged = merge_inventory({{"cuda", {}}, {"cpu-sim", {"0", "1"}}},
                                      {{"cuda", {"0"}}, {"tpu", {"0", "1", "2"}}});
  EXPECT_TRUE(merged.at("cuda").empty());
  EXPECT_EQ(merged.at("tpu").size(), 3u);
  EXPECT_EQ(device_counts(merged).at("cpu-sim"), 2);
}

}  // namespace
}  // namespace ranktest::schedule
