#include "devices/trace_player_image.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <map>
#include <unordered_map>

namespace smmu_vp {

namespace {

using dmatrace::Op;
using dmatrace::Record;

static_assert(sizeof(tp_image_header) % 8 == 0, "records must start 8-byte aligned");
static_assert(sizeof(tp_record) == 64 && sizeof(tp_segment) == 16, "the app's layout");
static_assert(static_cast<unsigned>(TP_OP_COMMAND) + 1 == dmatrace::kOpCount, "ops in the file's order");

constexpr uint64_t kMaxSegsPerRecord = 0xffff;  // tp_record.nsegs

// The live mappings of one StreamID, by trace iova: disjoint intervals, since
// a map over a live one ends the older one's liveness.
struct Live {
  uint64_t end;  // exclusive
  uint32_t slot;
};
using LiveMap = std::map<uint64_t, Live>;

uint64_t end_of(uint64_t iova, uint64_t size) {
  const uint64_t n = std::max<uint64_t>(size, 1);  // a zero-size map still names its address
  return iova + n < iova ? ~0ull : iova + n;
}

// The live mapping containing iova, or m.end().
LiveMap::iterator find_live(LiveMap& m, uint64_t iova) {
  auto it = m.upper_bound(iova);
  if (it == m.begin()) return m.end();
  --it;
  return iova < it->second.end ? it : m.end();
}

bool is_mapping(Op op) { return op == Op::kMap || op == Op::kMapSg || op == Op::kAlloc || op == Op::kIommuMap; }
bool is_unmapping(Op op) {
  return op == Op::kUnmap || op == Op::kUnmapSg || op == Op::kFree || op == Op::kIommuUnmap;
}

}  // namespace

uint8_t tp_op_of(Op op) { return static_cast<uint8_t>(op); }

TraceImage build_trace_image(std::vector<Record> records, uint32_t default_sid) {
  TraceImage img;
  // Order of the records kept (input indices), stably sorted by time.
  std::vector<uint64_t> order;
  order.reserve(records.size());
  bool dma_api = false;
  for (uint64_t i = 0; i < records.size(); ++i) {
    const Record& r = records[i];
    if (r.op == Op::kCommand) {
      ++img.commands_dropped;
      continue;
    }
    if (r.op == Op::kMapSg && r.segs.size() > kMaxSegsPerRecord)
      throw TraceImageError(i, "map_sg has " + std::to_string(r.segs.size()) +
                                   " segments; the image holds at most 65535 per record");
    dma_api = dma_api || r.op == Op::kMap || r.op == Op::kMapSg || r.op == Op::kAlloc;
    order.push_back(i);
  }
  if (order.size() > 0xfffffffeull) throw TraceImageError(0, "more records than the image can count");
  std::stable_sort(order.begin(), order.end(),
                   [&](uint64_t a, uint64_t b) { return records[a].time_ns < records[b].time_ns; });
  if (dma_api) img.flags |= TP_IMAGE_HAS_DMA_API;

  std::vector<tp_record> out(order.size());
  std::vector<tp_segment> segs;
  std::unordered_map<uint32_t, LiveMap> live;
  std::vector<uint32_t> last_access_plus1;  // per slot
  const uint64_t t0 = order.empty() ? 0 : records[order.front()].time_ns;

  for (size_t k = 0; k < order.size(); ++k) {
    const Record& r = records[order[k]];
    tp_record& o = out[k];
    std::memset(&o, 0, sizeof o);
    o.time_ns = r.time_ns - t0;
    o.iova = r.iova;
    o.pa = r.pa;
    o.size = r.size;
    o.sid = r.sid == dmatrace::kNoSid ? default_sid : r.sid;
    o.cpu = r.cpu < 0 ? TP_NO_CPU : r.cpu;
    o.slot = TP_NO_SLOT;
    o.op = tp_op_of(r.op);
    o.dir = (r.op == Op::kAccess || r.op == Op::kFault) ? (r.write ? 1 : 0) : static_cast<uint8_t>(r.dir);
    img.duration_ns = o.time_ns;

    // unmap_sg's aux is its wait: the replay unmaps what the slot's map_sg
    // mapped, so its own segments are not kept.
    if (r.op == Op::kMapSg && !r.segs.empty()) {
      if (segs.size() + r.segs.size() > 0xffffffffull)
        throw TraceImageError(order[k], "more segments than the image can count");
      o.aux = static_cast<uint32_t>(segs.size());
      o.nsegs = static_cast<uint16_t>(r.segs.size());
      for (const dmatrace::Segment& s : r.segs) segs.push_back({s.pa, s.len});
    }
    if (r.op == Op::kAttach) o.aux = r.asid;

    // iommu_map/unmap under DMA-API mappings are not replayed (header comment).
    const bool implied = dma_api && (r.op == Op::kIommuMap || r.op == Op::kIommuUnmap);
    if (implied || r.op == Op::kAttach || r.op == Op::kDetach) continue;
    LiveMap& m = live[o.sid];

    if (is_mapping(r.op)) {
      o.slot = img.slots++;
      last_access_plus1.push_back(0);
      if (r.iova == dmatrace::kNoAddr) continue;  // nothing can find it
      const uint64_t end = end_of(r.iova, r.size);
      auto it = m.upper_bound(r.iova);
      if (it != m.begin() && std::prev(it)->second.end > r.iova) --it;
      bool overlaps = false;
      while (it != m.end() && it->first < end) {
        it = m.erase(it);
        overlaps = true;
      }
      if (overlaps) ++img.overlapping;
      m.emplace(r.iova, Live{end, o.slot});
      continue;
    }

    // A user of a mapping: unmap, sync, free, access or fault.
    auto it = r.iova == dmatrace::kNoAddr ? m.end() : find_live(m, r.iova);
    if (it == m.end()) {
      if (r.op == Op::kAccess) ++img.accesses_unmapped;
      else if (r.op != Op::kFault) ++img.unmatched;
    } else {
      o.slot = it->second.slot;
      o.offset = r.iova - it->first;
    }
    if (r.op == Op::kAccess) {
      if (o.slot != TP_NO_SLOT) last_access_plus1[o.slot] = static_cast<uint32_t>(img.accesses.size()) + 1;
      PlayerAccess a;
      a.time_ns = o.time_ns;
      a.sid = o.sid;
      a.slot = o.slot;
      a.offset = o.offset;
      a.size = r.size;
      a.write = r.write;
      img.accesses.push_back(a);
    }
    if (is_unmapping(r.op) && it != m.end()) {
      // Not before the accesses to the mapping that came before it are done.
      o.aux = last_access_plus1[o.slot];
      m.erase(it);
    }
  }

  img.records = static_cast<uint32_t>(out.size());
  img.segments = static_cast<uint32_t>(segs.size());
  tp_image_header h;
  std::memset(&h, 0, sizeof h);
  h.magic = TP_IMAGE_MAGIC;
  h.version = TP_VERSION_VALUE;
  h.records = img.records;
  h.segments = img.segments;
  h.slots = img.slots;
  h.flags = img.flags;
  h.duration_ns = img.duration_ns;
  h.unmatched = img.unmatched;
  h.overlapping = img.overlapping;
  const size_t rec_bytes = out.size() * sizeof(tp_record);
  const size_t seg_bytes = segs.size() * sizeof(tp_segment);
  img.bytes.resize(sizeof h + rec_bytes + seg_bytes);
  std::memcpy(img.bytes.data(), &h, sizeof h);
  if (rec_bytes) std::memcpy(img.bytes.data() + sizeof h, out.data(), rec_bytes);
  if (seg_bytes) std::memcpy(img.bytes.data() + sizeof h + rec_bytes, segs.data(), seg_bytes);
  return img;
}

}  // namespace smmu_vp
