// main() for test programs that link SystemC: libsystemc's main() calls
// sc_main, which runs the GoogleTest suite. Each test that elaborates a
// platform must run in its own process (SystemC elaborates once per process);
// gtest_discover_tests gives every test its own ctest entry and process.
#include <cstdlib>

#include <gtest/gtest.h>
#include <systemc>

#include "common/tlm_time.h"

namespace {
const bool kQuietSystemC = setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0) == 0;
}

int sc_main(int argc, char** argv) {
  (void)kQuietSystemC;
  smmu_vp::use_ranked_time();  // before any sc_time is made (common/tlm_time.h)
  sc_core::sc_report_handler::set_actions("/OSCI/SystemC", sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
