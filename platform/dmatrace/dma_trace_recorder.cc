#include "dmatrace/dma_trace_recorder.h"

#include "config/run_config.h"
#include "smmu/commands.h"

namespace smmu_vp {

using dmatrace::Op;

DmaTraceRecorder::DmaTraceRecorder(const std::string& path, const config::RunConfig& cfg)
    : path_(path), writer_(path) {
  for (const auto& d : cfg.devices) device_of_sid_[d.stream_id] = d.name;
  writer_.comment("recorded by smmu-vp run --record-trace (scenario " + cfg.name + ")");
}

void DmaTraceRecorder::write(dmatrace::Record& r, uint32_t sid, Ps at) {
  r.time_ns = at / kPsPerNs;
  r.sid = sid;
  const auto dev = device_of_sid_.find(sid);
  r.dev = dev == device_of_sid_.end() ? std::string() : dev->second;
  if (!error_.empty()) return;
  // Called from the models' threads: a failing disk must not unwind them.
  try {
    writer_.write(r);
  } catch (const std::exception& e) {
    error_ = e.what();
  }
}

void DmaTraceRecorder::dma_call(unsigned cpu, Ps at, const hal_dma_call& call) {
  dmatrace::Record& r = rec_;
  r = dmatrace::Record{};
  r.cpu = static_cast<int32_t>(cpu);
  // hal_dma_trace_op takes the values of the trace player's tp_op, which
  // follow dmatrace::Op.
  r.op = static_cast<Op>(call.op);
  r.dir = static_cast<dmatrace::Dir>(call.dir <= 3 ? call.dir : 3);
  if (r.op == Op::kAttach || r.op == Op::kDetach) {
    r.asid = call.asid;
  } else {
    r.iova = call.iova;
    r.pa = call.pa == ~0ull ? dmatrace::kNoAddr : call.pa;
    r.size = call.size;
  }
  const auto* pa = reinterpret_cast<const uint8_t*>(call.seg_pa);
  const auto* len = reinterpret_cast<const uint8_t*>(call.seg_len);
  for (unsigned i = 0; pa && len && i < call.nsegs; ++i)
    r.segs.push_back({*reinterpret_cast<const phys_addr_t*>(pa + i * call.seg_stride),
                      *reinterpret_cast<const size_t*>(len + i * call.seg_stride)});
  write(r, call.sid, at);
}

void DmaTraceRecorder::on_access(uint32_t sid, uint64_t addr, uint64_t len, bool write_access, Ps at) {
  dmatrace::Record& r = rec_;
  r = dmatrace::Record{};
  r.op = Op::kAccess;
  r.iova = addr;
  r.size = len;
  r.write = write_access;
  write(r, sid, at);
}

void DmaTraceRecorder::on_fault(uint32_t sid, uint64_t addr, bool write_access, Ps at) {
  dmatrace::Record& r = rec_;
  r = dmatrace::Record{};
  r.op = Op::kFault;
  r.iova = addr;
  r.write = write_access;
  write(r, sid, at);
}

void DmaTraceRecorder::on_command(const smmu::Command& cmd, Ps at) {
  using smmu::Opcode;
  dmatrace::Record& r = rec_;
  r = dmatrace::Record{};
  r.op = Op::kCommand;
  r.text = smmu::command_name(cmd);
  uint32_t sid = dmatrace::kNoSid;
  switch (cmd.opcode) {
    case Opcode::kCfgiSte:
    case Opcode::kCfgiSteRange:
    case Opcode::kCfgiCd:
    case Opcode::kCfgiCdAll:
      sid = cmd.sid;
      break;
    case Opcode::kTlbiNhAsid:
      r.asid = cmd.asid;
      break;
    case Opcode::kTlbiNhVa:
      r.asid = cmd.asid;
      r.iova = cmd.addr;
      break;
    case Opcode::kTlbiNhVaa:
      r.iova = cmd.addr;
      break;
    default:
      break;
  }
  // A range TLBI (TG != 0) covers (NUM + 1) * 2^SCALE granules (IHI 0070 4.4.1.1).
  if (cmd.tg) r.size = (static_cast<uint64_t>(cmd.num) + 1) << (cmd.scale + 10 + 2 * cmd.tg);
  write(r, sid, at);
}

void DmaTraceRecorder::close() {
  try {
    writer_.close();
  } catch (const std::exception& e) {
    if (error_.empty()) error_ = e.what();
  }
}

}  // namespace smmu_vp
