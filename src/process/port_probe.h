#pragma once

namespace ranktest::process {

// Whether a TCP server could listen on `port` right now (bound on all
// addresses with SO_REUSEADDR, as rendezvous servers such as torch's
// TCPStore do). A port another process listens on is not free.
bool tcp_port_is_free(int port);

}  // namespace ranktest::process
