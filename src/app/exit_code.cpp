#include "app/exit_code.h"

namespace ranktest::app {

const std::vector<ExitCodeDoc>& exit_code_docs() {
  static const std::vector<ExitCodeDoc> docs{
      {0, "every selected test passed or was skipped"},
      {1, "at least one test failed, crashed, timed out or was not run"},
      {2, "the command line or the configuration is wrong (a quarantine past its date "
          "too), or asks for what this machine cannot give; nothing ran"},
      {3, "a test source could not be listed; nothing ran"},
      {4, "ranktest itself failed: the run folder or a report could not be "
          "written"},
      {5, "no test matched the selection (see --no-tests)"},
      {130, "interrupted by SIGINT (ctrl-c); reports were written"},
      {143, "interrupted by SIGTERM; reports were written"},
  };
  return docs;
}

}  // namespace ranktest::app
