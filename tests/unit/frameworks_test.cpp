// The registry of frameworks: the one switch on a test's framework.
#include "frameworks/framework_kind.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "config/implicit_sources.h"
#include "frameworks/framework_adapter.h"
#include "process/temporary_directory.h"

namespace ranktest::frameworks {
namespace {

namespace fs = std::filesystem;

TEST(Frameworks, EachKindHasOneFrameworkFoundByItsName) {
  std::set<std::string_view> names;
  for (const auto kind : {SuiteKind::gtest, SuiteKind::pytest, SuiteKind::ctest}) {
    const auto& framework = framework_of(kind);
    EXPECT_EQ(framework.id(), kind);
    EXPECT_TRUE(names.insert(framework.name()).second) << framework.name();
    ASSERT_NE(framework_named(framework.name()), nullptr);
    EXPECT_EQ(framework_named(framework.name())->id(), kind);
    EXPECT_EQ(&execute::adapter_for(kind), &framework.adapter());
  }
  EXPECT_EQ(all_frameworks().size(), names.size());
  EXPECT_EQ(framework_named("nose"), nullptr);
  EXPECT_EQ(framework_names(), "gtest, pytest, ctest");
}

TEST(Frameworks, WorkerStyleFollowsTheSource) {
  TestSource forked;
  forked.kind = SuiteKind::pytest;
  forked.fork_server = true;
  EXPECT_EQ(framework_of(SuiteKind::pytest).worker_style(forked), WorkerStyle::forked_from_server);
  // A pytest source run plain has no server to fork its worker from.
  forked.fork_server = false;
  EXPECT_EQ(framework_of(SuiteKind::pytest).worker_style(forked), WorkerStyle::none);
  TestSource binary;
  EXPECT_EQ(framework_of(SuiteKind::gtest).worker_style(binary), WorkerStyle::own_loop);
  EXPECT_EQ(framework_of(SuiteKind::ctest).worker_style(binary), WorkerStyle::none);
}

TEST(Frameworks, JunitNamesAreEachFrameworksOwn) {
  const auto pytest =
      framework_of(SuiteKind::pytest).junit_name("tests/test_a.py::TestB::test_c[x.y]", "src");
  EXPECT_EQ(pytest.classname, "tests.test_a.TestB");
  EXPECT_EQ(pytest.name, "test_c[x.y]");
  const auto gtest = framework_of(SuiteKind::gtest).junit_name("Suite.Case", "bin_test");
  EXPECT_EQ(gtest.classname, "Suite");
  EXPECT_EQ(gtest.name, "Case");
  const auto ctest = framework_of(SuiteKind::ctest).junit_name("tool_runs", "build");
  EXPECT_EQ(ctest.classname, "tool_runs");
  EXPECT_EQ(ctest.name, "tool_runs");
}

class ImpliedSources : public ::testing::Test {
 protected:
  void SetUp() override {
    auto made = process::TemporaryDirectory::create("ranktest-frameworks-");
    ASSERT_TRUE(made) << made.error().message;
    folder_.emplace(std::move(*made));
  }
  fs::path make(const std::string& relative) const {
    const auto path = folder_->path() / relative;
    fs::create_directories(path.parent_path());
    std::ofstream(path) << "\n";
    return path;
  }
  const fs::path& root() const { return folder_->path(); }

 private:
  std::optional<process::TemporaryDirectory> folder_;
};

TEST_F(ImpliedSources, APathIsOfferedToTheMostParticularFrameworkFirst) {
  // A CMake build folder that also holds Python tests is CTest's.
  make("build/CTestTestfile.cmake");
  make("build/test_generated.py");
  auto build = config::source_of_path((root() / "build").string());
  ASSERT_TRUE(build) << build.error().message;
  EXPECT_EQ(build->kind, SuiteKind::ctest);

  make("py/test_a.py");
  auto python = config::source_of_path((root() / "py").string());
  ASSERT_TRUE(python) << python.error().message;
  EXPECT_EQ(python->kind, SuiteKind::pytest);
  auto file = config::source_of_path((root() / "py/test_a.py").string());
  ASSERT_TRUE(file);
  EXPECT_EQ(file->kind, SuiteKind::pytest);

  auto binary = config::source_of_path((root() / "bin/a_test").string());
  ASSERT_TRUE(binary);
  EXPECT_EQ(binary->kind, SuiteKind::gtest);
  EXPECT_EQ(binary->place.to_string(), "command line");  // every binary shares one source

  fs::create_directories(root() / "empty");
  auto empty = config::source_of_path((root() / "empty").string());
  ASSERT_FALSE(empty);
  // The error says what each framework looks for and what a path may be.
  for (const auto* framework : all_frameworks()) {
    if (!framework->folder_marks().empty()) {
      EXPECT_NE(empty.error().message.find(framework->folder_marks()), std::string::npos)
          << empty.error().message;
    }
    EXPECT_NE(empty.error().message.find(framework->command_line_path()), std::string::npos)
        << empty.error().message;
  }
}

TEST_F(ImpliedSources, AFolderHoldsEachFrameworksSourceInRegistryOrder) {
  std::ofstream(make("pytest.ini")) << "[pytest]\ntestpaths = tests more\n";
  make("CTestTestfile.cmake");
  const auto implied = config::sources_of_folder(root());
  ASSERT_EQ(implied.sources.size(), 2u);
  EXPECT_EQ(implied.sources[0].kind, SuiteKind::pytest);
  EXPECT_EQ(implied.sources[0].paths, (std::vector<std::string>{"tests", "more"}));
  EXPECT_TRUE(implied.sources[0].fork_server);
  EXPECT_EQ(implied.sources[1].kind, SuiteKind::ctest);
  EXPECT_FALSE(implied.sources[1].fork_server);
  EXPECT_EQ(implied.found[0], "a pytest project (pytest.ini; collecting tests more)");
  EXPECT_EQ(implied.found[1], "a CMake build folder (CTestTestfile.cmake)");
}

}  // namespace
}  // namespace ranktest::frameworks
