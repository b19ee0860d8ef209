// main() for test programs that link SystemC: libsystemc's main() calls
// sc_main, which runs the GoogleTest suite. Each test that elaborates a
// platform must run in its own process (SystemC elaborates once per process);
// gtest_discover_tests gives every test its own ctest entry and process.
#include <cstdlib>

#include <gtest/gtest.h>
#include <systemc>

namespace {
const bool kQuietSystemC = setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0) == 0;
}

int sc_main(int argc, char** argv) {
  (void)kQuietSystemC;
  sc_core::sc_report_handler::set_actions("/OSCI/SystemC", sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
