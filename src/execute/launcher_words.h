// What a launcher (mpirun, srun) said when it started no rank, cut to the
// lines that say why.
#pragma once

#include <string>
#include <string_view>

namespace ranktest::execute {

// OpenMPI frames each refusal in lines of dashes, its reason first ("mpirun
// has detected an attempt to run as root.", "There are not enough slots
// available in the system to satisfy the 4 slots ...") and pages of advice
// after: the first paragraph of the last framed block, at most `max_lines`
// lines. Anything else (srun: "srun: fatal: ..."): its last `max_lines`
// lines. Each line is made safe for a terminal and cut to 300 bytes.
std::string launcher_refusal(std::string_view output, std::size_t max_lines = 5);

}  // namespace ranktest::execute
