// Containment of a run (README.md "Using it", docs/firmware.md): while a
// Containment lives, the simulation thread survives what the code it runs
// does wrong, and the run ends with its outputs written.
//
//  - A crash (SIGSEGV, SIGBUS, SIGFPE, SIGILL) in a core's program stops that
//    core: the handler, on a stack of its own (sigaltstack, so that a stack
//    overflow can be handled), records the fault and siglongjmps back into
//    the core's thread function (CpuCore::escape), which ends the core as a
//    failed program; the simulation then winds down as after any failure.
//    Only the crashed program's frames are abandoned; the kernel, the models
//    and the other cores are left in the state of a normal context switch.
//  - A watchdog (a SIGALRM interval timer) notices simulated time standing
//    still for `watchdog_s` of wall time. It first asks the cores to stop at
//    their next HAL call (a clean unwind); if none does within kGrace, the
//    core running now is stopped like a crashed one.
//  - SIGINT / SIGTERM ask the simulation to stop (sc_stop at the next HAL
//    call, or at the main loop's next slice); if that has not happened after
//    kGrace, the running core is stopped the hard way. A second signal kills
//    the process at once.
//  - A fault or a hang outside every core's program (a device model, the
//    simulator) siglongjmps to the main loop instead (Platform::run). The
//    kernel is then left mid-step: the outputs can still be written, but the
//    process must end without SystemC's teardown (kernel_abandoned()).
#pragma once

#include <csetjmp>

#include "cpu/cpu_cluster.h"

namespace smmu_vp {

class Containment {
 public:
  static constexpr double kGrace = 0.5;  // s of wall time before a hard stop

  // Installs the handlers for the calling (simulation) thread; one
  // Containment at a time. watchdog_s 0: no watchdog.
  Containment(CpuCluster& cpus, double watchdog_s);
  ~Containment();  // restores the previous handlers, timer and signal stack
  Containment(const Containment&) = delete;
  Containment& operator=(const Containment&) = delete;

  // Where a fault or hang outside every core's program lands: set with
  // sigsetjmp by the main loop, which arms it while it simulates.
  sigjmp_buf& main_escape();
  void arm_main(bool armed);
  // What stopped the main loop through main_escape (kind kNone: nothing).
  const CpuCore::Fault& main_fault() const;

  // SIGINT or SIGTERM when one asked the run to stop, else 0.
  int interrupt_signal() const;
  double watchdog_s() const;
};

}  // namespace smmu_vp
