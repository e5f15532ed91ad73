#include "app/run_command.h"

#include "app/run_session.h"

namespace ranktest::app {

int run_command(const CommandLine& cli) {
  RunSession session(cli);
  if (const auto ended = session.plan()) return *ended;
  if (const auto ended = session.open()) return *ended;
  session.execute();
  return session.finish();
}

}  // namespace ranktest::app
