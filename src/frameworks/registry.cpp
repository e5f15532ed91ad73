// The registry of frameworks: what model/framework_list.h lists.
#include <fmt/format.h>

#include "frameworks/framework_adapter.h"
#include "frameworks/framework_kind.h"

namespace ranktest::frameworks {

// Each defined in its room (frameworks/NAME/NAME_kind.cpp).
#define RANKTEST_FRAMEWORK(name) const FrameworkKind& name##_framework();
#include "model/framework_list.h"
#undef RANKTEST_FRAMEWORK

const std::vector<const FrameworkKind*>& all_frameworks() {
  static const std::vector<const FrameworkKind*> frameworks{
#define RANKTEST_FRAMEWORK(name) &name##_framework(),
#include "model/framework_list.h"
#undef RANKTEST_FRAMEWORK
  };
  return frameworks;
}

const FrameworkKind& framework_of(SuiteKind kind) {
  for (const auto* framework : all_frameworks())
    if (framework->id() == kind) return *framework;
  return gtest_framework();  // every SuiteKind is listed above
}

const FrameworkKind* framework_named(std::string_view name) {
  for (const auto* framework : all_frameworks())
    if (framework->name() == name) return framework;
  return nullptr;
}

std::string framework_names(std::string_view separator) {
  std::vector<std::string_view> names;
  for (const auto* framework : all_frameworks()) names.push_back(framework->name());
  return fmt::format("{}", fmt::join(names, separator));
}

}  // namespace ranktest::frameworks

namespace ranktest::execute {

const FrameworkAdapter& adapter_for(SuiteKind kind) {
  return frameworks::framework_of(kind).adapter();
}

}  // namespace ranktest::execute
