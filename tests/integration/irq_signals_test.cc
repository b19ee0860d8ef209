// IrqSignals (models/common/irq_signals.h): the adapter from IrqSink to
// sc_out<bool>, for a platform that wires interrupts as signals.
#include "common/irq_signals.h"

#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <systemc>

#include "common/invalid_config.h"

namespace smmu_vp {
namespace {

// Records every change of a signal with its time.
struct Probe : sc_core::sc_module {
  sc_core::sc_in<bool> in{"in"};
  std::vector<std::pair<double, bool>> edges;  // (ns, level)
  SC_HAS_PROCESS(Probe);
  explicit Probe(sc_core::sc_module_name n) : sc_module(n) {
    SC_METHOD(sample);
    sensitive << in;
    dont_initialize();
  }
  void sample() { edges.emplace_back(sc_core::sc_time_stamp() / sc_core::sc_time(1, sc_core::SC_NS), in.read()); }
};

TEST(IrqSignals, ARaiseIsAPulseHeldWhilePulsesOverlap) {
  IrqSignals irqs("irqs", 2, sc_core::sc_time(2, sc_core::SC_NS));
  sc_core::sc_signal<bool> line0("line0"), line1("line1");
  irqs.out[0].bind(line0);
  irqs.out[1].bind(line1);
  Probe p0("p0"), p1("p1");
  p0.in.bind(line0);
  p1.in.bind(line1);
  EXPECT_TRUE(irqs.raise_line(0, sc_core::sc_time(10, sc_core::SC_NS)));
  EXPECT_TRUE(irqs.raise_line(0, sc_core::sc_time(11, sc_core::SC_NS)));  // overlaps: one pulse 10..13
  EXPECT_TRUE(irqs.raise_line(1, sc_core::sc_time(20, sc_core::SC_NS)));
  EXPECT_FALSE(irqs.raise_line(2));  // no such line
  sc_core::sc_start(sc_core::sc_time(100, sc_core::SC_NS));
  EXPECT_EQ(p0.edges, (std::vector<std::pair<double, bool>>{{10, true}, {13, false}}));
  EXPECT_EQ(p1.edges, (std::vector<std::pair<double, bool>>{{20, true}, {22, false}}));
  EXPECT_EQ(irqs.raised(0), 2u);
  EXPECT_EQ(irqs.raised(1), 1u);
  EXPECT_EQ(irqs.raised(2), 0u);
}

TEST(IrqSignals, APulseOfNoWidthIsRefused) {
  try {
    IrqSignals irqs("irqs0", 1, sc_core::SC_ZERO_TIME);
    FAIL() << "accepted";
  } catch (const InvalidConfig& e) {
    EXPECT_EQ(e.field(), "width");
  }
  EXPECT_EQ(sc_core::sc_find_object("irqs0"), nullptr);
}

}  // namespace
}  // namespace smmu_vp
