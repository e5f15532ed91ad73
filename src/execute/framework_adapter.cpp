#include "execute/framework_adapter.h"

namespace ranktest::execute {

// Each framework's adapter, defined in its own file.
const FrameworkAdapter& gtest_adapter();
const FrameworkAdapter& pytest_adapter();
const FrameworkAdapter& ctest_adapter();

const FrameworkAdapter& adapter_for(SuiteKind kind) {
  switch (kind) {
    case SuiteKind::pytest: return pytest_adapter();
    case SuiteKind::ctest: return ctest_adapter();
    case SuiteKind::gtest: break;
  }
  return gtest_adapter();
}

}  // namespace ranktest::execute
