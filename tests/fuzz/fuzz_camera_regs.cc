// fuzz_camera_regs: the camera's register file, buffer and done queues and
// frame bookkeeping (models/camera/camera_core.h), driven as the SystemC
// module drives it: register reads (DONE_POP pops) and writes of any size,
// interleaved with frames started, their lines lost, faulted or resolved,
// and frames completed. Line data and timing live in the SystemC module.
// Checks: queue levels never exceed the depth; a frame's lines resolve at
// most `height` times before it completes.
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "camera/camera_core.h"
#include "fuzz_device.h"

using namespace smmu_vp;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Input in(data, size);
  CameraCore::Params p;
  p.width = 1 + in.u8();
  p.height = 1 + in.pick(8);
  p.queue_depth = 1 + in.pick(8);
  p.fps = 1 + in.pick(240);
  CameraCore c(p);
  std::vector<CamFrame> frames;  // started, not yet complete
  Ps now = 0;
  while (!in.empty()) {
    const uint8_t op = in.u8();
    switch (op & 7) {
      case 0:
      case 1: {
        const fuzz::RegAccess a = fuzz::reg_access(in, CameraCore::register_block_size());
        uint64_t v = 0;
        if (c.read(a.offset, a.len, &v) != CameraCore::Access::kOk && v != 0) std::abort();
        break;
      }
      case 2:
      case 3: {
        const fuzz::RegAccess a = fuzz::reg_access(in, CameraCore::register_block_size());
        CameraCore::Effects fx;
        c.write(a.offset, a.len, in.u64(), &fx);
        break;
      }
      case 4:
        if (frames.size() < 4) {
          now += c.frame_offset(1);
          const CamFrame f = c.start_frame(now);
          if (f.has_buffer) frames.push_back(f);  // dropped frames are not tracked (as in camera.cc)
        }
        break;
      case 5:
        c.set_streaming(in.bit());
        break;
      default: {
        if (frames.empty()) break;
        const size_t i = (op >> 3) % frames.size();
        CamFrame& f = frames[i];
        const unsigned how = in.pick(3);
        if (how == 0) c.line_lost(f);
        if (how == 1) c.line_fault(f);
        now += c.line_time();
        if (f.lines_done >= p.height) std::abort();
        if (c.line_resolved(f, now)) {
          if (f.lines_done != p.height) std::abort();
          c.complete_frame(f);
          frames.erase(frames.begin() + static_cast<long>(i));
        }
        break;
      }
    }
    if (c.queued() > p.queue_depth) std::abort();
  }
  return 0;
}
