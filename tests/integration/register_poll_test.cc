// hal_read_poll32 beside the plain loop it stands for, in one run: core 0
// polls the SMMU's CMDQ_CONS with hal_read_poll32 (asleep between reads),
// core 1 the same register with the loop of hal_read32 and hal_cpu_relax,
// from the same time. Interrupts come to both at the same instants, spread
// over every phase of a read; each core's handler records when it ran. The
// loop takes an interrupt at its first synchronisation at or after it: a
// read's start, or its end when the read crossed a quantum boundary (a short
// quantum makes that common), or before it, at the end of the relax that
// reached a boundary; a handler that takes time there makes the read's own
// synchronisation come later and take what fell due meanwhile. The sleeping
// poll must run every handler at the loop's time and count the same reads.
#include <systemc>

#include <gtest/gtest.h>

#include "hal/hal.h"
#include "platform_fixture.h"

namespace smmu_vp::test {
namespace {

constexpr unsigned kLine[2] = {200, 201};  // core 0's, core 1's
constexpr int kRaises = 120;  // in pairs 3 ns apart
constexpr unsigned kReads = 4000;
constexpr uint64_t kStartNs = 1000;
uint64_t g_handled_ps[2][kRaises];
int g_handled[2];
uint64_t g_end_ps[2];
unsigned g_reads[2];

void on_irq(unsigned line, void*) {
  const int core = line == kLine[0] ? 0 : 1;
  if (g_handled[core] < kRaises) g_handled_ps[core][g_handled[core]] = hal_now_ps();
  ++g_handled[core];
  hal_delay_ns(6);  // the handler's work, after its last synchronisation
}

bool never(uint32_t, const void*) { return false; }

phys_addr_t cons_pa() { return hal_smmu().base + 0x9C; }  // CMDQ_CONS (IHI 0070 6.3.27)

int sleeping_main(void) {
  if (hal_irq_register(kLine[0], on_irq, nullptr) != 0) return 1;
  hal_delay_ns(kStartNs - hal_now_ns());
  hal_read_poll32(cons_pa(), never, nullptr, kReads, &g_reads[0]);
  g_end_ps[0] = hal_now_ps();
  return 0;
}
const hal_app sleeping_app = {"sleeping_poll", "polls CMDQ_CONS with hal_read_poll32", sleeping_main, nullptr};

int loop_main(void) {
  if (hal_irq_register(kLine[1], on_irq, nullptr) != 0) return 1;
  hal_delay_ns(kStartNs - hal_now_ns());
  unsigned n = 0;
  while (n < kReads) {
    const uint32_t v = hal_read32(cons_pa());
    ++n;
    if (never(v, nullptr)) break;
    hal_cpu_relax();
  }
  g_reads[1] = n;
  g_end_ps[1] = hal_now_ps();
  return 0;
}
const hal_app loop_app = {"loop_poll", "polls CMDQ_CONS with hal_read32 in a loop", loop_main, nullptr};

// Raises both lines at once, in pairs 3 ns apart, a pair every 73 to 139 ns
// from the polls' start.
void raiser(InterruptController* intc) {
  sc_core::wait(sc_core::sc_time(kStartNs + 50, sc_core::SC_NS));
  for (int i = 0; i < kRaises; ++i) {
    intc->raise_line(kLine[0]);
    intc->raise_line(kLine[1]);
    sc_core::wait(sc_core::sc_time(i % 2 ? 73 + 11 * (i / 2 % 7) : 3, sc_core::SC_NS));
  }
}

TEST(RegisterPoll, InterruptsAreTakenAtTheLoopsTime) {
  const nlohmann::json doc = scenario({{{"app", "sleeping_poll"}, {"cores", {0}}}, {{"app", "loop_poll"}, {"cores", {1}}}});
  auto cfg = config::build_run_config(doc, SMMU_VP_SOURCE_DIR, {"platform.cpu.quantum_ns=30"},
                                      with_builtin({&sleeping_app, &loop_app}));
  auto log = std::make_shared<spdlog::logger>("test", std::make_shared<spdlog::sinks::null_sink_mt>());
  Platform p(cfg, nullptr, log);
  sc_core::sc_spawn(sc_bind(&raiser, &p.intc()), "raiser");
  const RunResult r = p.run();
  ASSERT_EQ(r.status, RunResult::Status::kCompleted) << r.message;
  const Counter* slept = p.stats().find_counter("cpus.cpu0.poll_skipped_reads");
  ASSERT_NE(slept, nullptr);
  EXPECT_GT(slept->value(), kReads / 2);  // it slept through most reads
  // A raise while the line is still pending is one interrupt with it.
  ASSERT_EQ(g_handled[0], g_handled[1]);
  ASSERT_GT(g_handled[0], kRaises / 2);
  for (int i = 0; i < g_handled[0]; ++i) EXPECT_EQ(g_handled_ps[0][i], g_handled_ps[1][i]) << "interrupt " << i;
  EXPECT_EQ(g_reads[0], kReads);
  EXPECT_EQ(g_reads[1], kReads);
  EXPECT_EQ(g_end_ps[0], g_end_ps[1]);
  EXPECT_EQ(p.stats().find_counter("cpus.cpu0.mmio_accesses")->value(),
            p.stats().find_counter("cpus.cpu1.mmio_accesses")->value());
}

// A handler that faults while its core sleeps in a register poll: the core
// stops as crashed (platform/containment.h), its frames abandoned, and the
// poll's watch must leave the SMMU with them; a register write by the other
// core afterwards (which checks the watches) then touches nothing of it.
void faulting_irq(unsigned, void*) { __builtin_trap(); }

int faulting_poll_main(void) {
  if (hal_irq_register(kLine[0], faulting_irq, nullptr) != 0) return 1;
  hal_write32(hal_msi_doorbell(), kLine[0]);  // due in a few ns: taken in the poll
  hal_read_poll32(cons_pa(), never, nullptr, kReads, nullptr);
  return 0;
}
const hal_app faulting_poll_app = {"faulting_poll", "a handler faults during a register poll", faulting_poll_main,
                                   nullptr};

int late_writer_main(void) {
  hal_delay_ns(5000);
  hal_write32(hal_smmu().base + 0x0C, 0);  // CR2 (IHI 0070 6.3.14)
  return 0;
}
const hal_app late_writer_app = {"late_writer", "writes an SMMU register later", late_writer_main, nullptr};

TEST(RegisterPoll, AFaultInAHandlerLeavesNoWatchBehind) {
  const nlohmann::json doc =
      scenario({{{"app", "faulting_poll"}, {"cores", {0}}}, {{"app", "late_writer"}, {"cores", {1}}}});
  auto cfg = config::build_run_config(doc, SMMU_VP_SOURCE_DIR, {}, with_builtin({&faulting_poll_app, &late_writer_app}));
  auto log = std::make_shared<spdlog::logger>("test", std::make_shared<spdlog::sinks::null_sink_mt>());
  Platform p(cfg, nullptr, log);
  p.set_containment(60.0);
  const RunResult r = p.run();
  EXPECT_EQ(r.status, RunResult::Status::kCrashed) << r.message;
  EXPECT_NE(r.message.find("cpu0"), std::string::npos) << r.message;
  ASSERT_NE(p.smmu(), nullptr);
  EXPECT_EQ(p.smmu()->watches(), 0u);
  EXPECT_EQ(p.cpus().core(1).exit_code(), 0);
}

}  // namespace
}  // namespace smmu_vp::test
