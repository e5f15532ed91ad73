#include "process/host_name.h"

#include <unistd.h>

namespace ranktest::process {

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return {};
  return name;
}

}  // namespace ranktest::process
