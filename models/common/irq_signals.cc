#include "common/irq_signals.h"

#include <string>

#include "common/invalid_config.h"

namespace smmu_vp {

// A pulse of no width would rise and fall in one delta cycle, in either order.
const sc_core::sc_module_name& IrqSignals::checked(const sc_core::sc_module_name& name, const sc_core::sc_time& width) {
  if (width == sc_core::SC_ZERO_TIME) throw InvalidConfig("width", "a pulse must last longer than 0");
  return name;
}

IrqSignals::IrqSignals(sc_core::sc_module_name name, unsigned lines, const sc_core::sc_time& width)
    : sc_module(checked(name, width)), out("out", lines), width_(width), lines_(lines) {
  for (unsigned i = 0; i < lines; ++i) {
    lines_[i].edges = std::make_unique<sc_core::sc_event_queue>(("edges_" + std::to_string(i)).c_str());
    sc_core::sc_spawn_options opts;
    opts.spawn_method();
    opts.dont_initialize();
    opts.set_sensitivity(&lines_[i].edges->default_event());
    sc_core::sc_spawn([this, i]() { drive(i); }, ("drive_line_" + std::to_string(i)).c_str(), &opts);
  }
}

bool IrqSignals::raise_line(unsigned line, const sc_core::sc_time& delay) {
  if (line >= lines_.size()) return false;
  Line& l = lines_[line];
  ++l.raised;
  const sc_core::sc_time start = sc_core::sc_time_stamp() + delay;
  l.starts.insert(start);
  l.ends.insert(start + width_);
  l.edges->notify(delay);
  l.edges->notify(delay + width_);
  return true;
}

void IrqSignals::drive(unsigned line) {
  Line& l = lines_[line];
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  // Starts first: a pulse that ends now began width_ earlier.
  for (; !l.starts.empty() && *l.starts.begin() <= now; l.starts.erase(l.starts.begin())) ++l.high;
  for (; !l.ends.empty() && *l.ends.begin() <= now; l.ends.erase(l.ends.begin())) --l.high;
  out[line].write(l.high > 0);
}

}  // namespace smmu_vp
