#include "devices/trace_player_image.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <iterator>
#include <map>
#include <unordered_map>

#include "dmatrace/phases.h"

namespace smmu_vp {

namespace {

using dmatrace::Op;
using dmatrace::Record;

static_assert(sizeof(tp_image_header) % 8 == 0, "records must start 8-byte aligned");
static_assert(sizeof(tp_record) == 64 && sizeof(tp_segment) == 16, "the app's layout");
static_assert(static_cast<unsigned>(TP_OP_MARK) + 1 == dmatrace::kOpCount, "ops in the file's order");

constexpr uint64_t kMaxSegsPerRecord = 0xffff;  // tp_record.nsegs

// The live mappings of one StreamID, by trace iova: disjoint intervals, since
// a map over a live one ends the older one's liveness.
struct Live {
  uint64_t end;  // exclusive
  uint32_t slot;
};
using LiveMap = std::map<uint64_t, Live>;

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

// Gives each record, in time order, its slot: mappings open one, users
// (unmap, sync, free, access, fault) find theirs in the live mappings of
// their StreamID. Counts what it cannot resolve into the image.
class SlotResolver {
 public:
  SlotResolver(bool dma_api, TraceImage& img) : dma_api_(dma_api), img_(img) {}

  // Also keeps each slot's span for the synthesis of accesses, and the
  // index of the record that unmaps it.
  void keep_spans(std::vector<MappingSpan>* spans, std::vector<uint32_t>* close_record) {
    spans_ = spans;
    close_record_ = close_record;
  }

  // `k`: the record's place in the image; `cls`: its device's class (mappings).
  void resolve(tp_record& o, uint32_t k, DeviceClass cls) {
    const Op op = static_cast<Op>(o.op);
    // iommu_map/unmap under DMA-API mappings are not replayed (header comment).
    const bool implied = dma_api_ && (op == Op::kIommuMap || op == Op::kIommuUnmap);
    if (implied || op == Op::kAttach || op == Op::kDetach) return;
    LiveMap& m = live_[o.sid];
    if (is_mapping(op)) {
      open(m, o, cls);
      return;
    }
    auto it = o.iova == dmatrace::kNoAddr ? m.end() : find_live(m, o.iova);
    if (it == m.end()) {
      if (op == Op::kAccess) ++img_.accesses_unmapped;
      else if (op != Op::kFault) ++img_.unmatched;
    } else {
      o.slot = it->second.slot;
      o.offset = o.iova - it->first;
    }
    if (op == Op::kAccess) add_access(o);
    if (is_unmapping(op) && it != m.end()) {
      // Not before the accesses to the mapping that came before it are done.
      o.aux = last_access_plus1_[o.slot];
      close(it->second.slot, o.time_ns, k);
      m.erase(it);
      // Linux's iommu_unmap ends everything mapped in its range: one unmap
      // of a scatterlist's IOVA range for the several iommu_map events that
      // mapped its pieces (dma-iommu's iommu_dma_map_sg).
      if (op == Op::kIommuUnmap) {
        const uint64_t end = dmatrace::range_end(o.iova, o.size);
        for (auto j = m.lower_bound(o.iova); j != m.end() && j->first < end; j = m.erase(j)) {
          o.aux = std::max(o.aux, last_access_plus1_[j->second.slot]);
          close(j->second.slot, o.time_ns, k);
        }
      }
    }
  }

 private:
  // The synthesis's span of a slot ends at its unmap, record k.
  void close(uint32_t slot, uint64_t time_ns, uint32_t k) {
    if (!spans_) return;
    (*spans_)[slot].close_ns = time_ns;
    (*close_record_)[slot] = k;
  }

  // A mapping: a new slot; a live mapping it overlaps stops being live.
  void open(LiveMap& m, tp_record& o, DeviceClass cls) {
    o.slot = img_.slots++;
    last_access_plus1_.push_back(0);
    if (spans_) keep_span(o, cls);
    if (o.iova == dmatrace::kNoAddr) return;  // nothing can find it
    const uint64_t end = dmatrace::range_end(o.iova, o.size);
    auto it = m.upper_bound(o.iova);
    if (it != m.begin() && std::prev(it)->second.end > o.iova) --it;
    bool overlaps = false;
    while (it != m.end() && it->first < end) {
      it = m.erase(it);
      overlaps = true;
    }
    if (overlaps) ++img_.overlapping;
    m.emplace(o.iova, Live{end, o.slot});
  }

  // What the device does with the mapping (trace_player_synth.h): by the
  // DMA-API direction; an iommu_map has none and is read; a coherent
  // allocation, or a mapping without an address, gets nothing.
  void keep_span(const tp_record& o, DeviceClass cls) {
    MappingSpan s;
    s.open_ns = o.time_ns;
    s.iova = o.iova;
    s.size = o.size;
    s.sid = o.sid;
    s.slot = o.slot;
    s.cls = cls;
    const Op op = static_cast<Op>(o.op);
    const auto dir = static_cast<dmatrace::Dir>(o.dir);
    if (op != Op::kAlloc && o.iova != dmatrace::kNoAddr) {
      s.reads = op == Op::kIommuMap || dir != dmatrace::Dir::kFromDevice;
      s.writes = op != Op::kIommuMap && (dir == dmatrace::Dir::kFromDevice || dir == dmatrace::Dir::kBidirectional);
    }
    spans_->push_back(s);
    close_record_->push_back(TP_NO_SLOT);
  }

  void add_access(const tp_record& o) {
    if (o.slot != TP_NO_SLOT) last_access_plus1_[o.slot] = static_cast<uint32_t>(img_.accesses.size()) + 1;
    PlayerAccess a;
    a.time_ns = o.time_ns;
    a.sid = o.sid;
    a.slot = o.slot;
    a.offset = o.offset;
    a.size = o.size;
    a.write = o.dir != 0;
    a.phase = o.phase;
    img_.accesses.push_back(a);
  }

  bool dma_api_;
  TraceImage& img_;
  std::unordered_map<uint32_t, LiveMap> live_;
  std::vector<uint32_t> last_access_plus1_;  // per slot
  std::vector<MappingSpan>* spans_ = nullptr;
  std::vector<uint32_t>* close_record_ = nullptr;
};

}  // namespace

uint8_t tp_op_of(Op op) { return static_cast<uint8_t>(op); }

void TraceImageBuilder::add(const Record& r) {
  const uint64_t index = added_++;
  if (r.op == Op::kCommand) {
    ++commands_dropped_;
    return;
  }
  if (r.op == Op::kMark) {
    // Not replayed: a phase marker sets the phase of the records after it
    // (finish()); other markers are left out.
    if (const auto name = dmatrace::phase_name(r)) marks_.push_back({r.time_ns, n_, std::string(*name)});
    return;
  }
  if (r.op == Op::kMapSg && r.segs.size() > kMaxSegsPerRecord)
    throw TraceImageError(index, "map_sg has " + std::to_string(r.segs.size()) +
                                     " segments; the image holds at most 65535 per record");
  if (n_ >= 0xfffffffeull) throw TraceImageError(index, "more records than the image can count");
  if (n_ && r.time_ns < rec(n_ - 1).time_ns) in_time_order_ = false;
  dma_api_ = dma_api_ || r.op == Op::kMap || r.op == Op::kMapSg || r.op == Op::kAlloc;

  if (n_ % kChunk == 0) chunks_.push_back(std::make_unique<tp_record[]>(kChunk));
  tp_record& o = rec(n_++);
  if (synth_.mode != SynthConfig::Mode::kOff)
    class_.push_back(static_cast<uint8_t>(is_mapping(r.op) ? synth_.class_of(r.dev, r.sid == dmatrace::kNoSid ? default_sid_ : r.sid)
                                                           : DeviceClass::kGeneric));
  std::memset(&o, 0, sizeof o);
  o.time_ns = r.time_ns;  // made relative to the first record in finish()
  o.iova = r.iova;
  o.pa = r.pa;
  o.size = r.size;
  o.sid = r.sid == dmatrace::kNoSid ? default_sid_ : r.sid;
  o.cpu = r.cpu < 0 ? TP_NO_CPU : r.cpu;
  o.slot = TP_NO_SLOT;
  o.op = tp_op_of(r.op);
  o.dir = (r.op == Op::kAccess || r.op == Op::kFault) ? (r.write ? 1 : 0) : static_cast<uint8_t>(r.dir);
  // unmap_sg's aux is its wait: the replay unmaps what the slot's map_sg
  // mapped, so its own segments are not kept.
  if (r.op == Op::kMapSg && !r.segs.empty()) {
    if (segs_.size() + r.segs.size() > 0xffffffffull)
      throw TraceImageError(index, "more segments than the image can count");
    o.aux = static_cast<uint32_t>(segs_.size());
    o.nsegs = static_cast<uint16_t>(r.segs.size());
    for (const dmatrace::Segment& sg : r.segs) segs_.push_back({sg.pa, sg.len});
  }
  if (r.op == Op::kAttach) o.aux = r.asid;
  if (r.op == Op::kAccess) ++accesses_;
}

uint64_t TraceImageBuilder::image_bytes() const {
  return sizeof(tp_image_header) + n_ * sizeof(tp_record) + segs_.size() * sizeof(tp_segment);
}

TraceImage TraceImageBuilder::finish() {
  TraceImage img;
  img.commands_dropped = commands_dropped_;
  if (dma_api_) img.flags |= TP_IMAGE_HAS_DMA_API;
  const size_t n = n_;

  // The records in time order, stably: a file may be out of order. Most are
  // not, and then no permutation is kept.
  std::vector<uint32_t> order;
  if (!in_time_order_) {
    order.resize(n);
    for (uint32_t i = 0; i < n; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](uint32_t a, uint32_t b) { return rec(a).time_ns < rec(b).time_ns; });
  }
  // Segments in the order of their records, as the image lays them out.
  std::vector<tp_segment> segs;
  if (order.empty()) {
    segs.swap(segs_);
  } else {
    segs.reserve(segs_.size());
    for (size_t k = 0; k < n; ++k) {
      tp_record& o = rec(order[k]);
      if (o.nsegs == 0) continue;
      const uint32_t first = static_cast<uint32_t>(segs.size());
      segs.insert(segs.end(), segs_.begin() + o.aux, segs_.begin() + o.aux + o.nsegs);
      o.aux = first;
    }
    std::vector<tp_segment>().swap(segs_);
  }

  SlotResolver slots(dma_api_, img);
  img.accesses.reserve(accesses_);
  // Accesses are made up for a trace that has none (or always, when asked).
  const bool synthesize = synth_.mode == SynthConfig::Mode::kOn || (synth_.mode == SynthConfig::Mode::kAuto && accesses_ == 0);
  std::vector<MappingSpan> spans;
  std::vector<uint32_t> close_record;
  if (synthesize) slots.keep_spans(&spans, &close_record);
  const uint64_t t0 = n ? rec(order.empty() ? 0 : order[0]).time_ns : 0;
  // Phases: the markers in time order (stably: file order at equal times);
  // a record is in the phase of the last marker before it in that order.
  std::stable_sort(marks_.begin(), marks_.end(), [](const Mark& a, const Mark& b) { return a.time_ns < b.time_ns; });
  if (!marks_.empty()) {
    img.flags |= TP_IMAGE_HAS_PHASES;
    img.phases.push_back(TracePhase{dmatrace::kLeadingPhaseName, 0, 0, 0});
    for (const Mark& m : marks_) img.phases.push_back(TracePhase{m.name, m.time_ns > t0 ? m.time_ns - t0 : 0, 0, 0});
  }
  size_t marks_before = 0;  // markers before the record at hand
  const size_t rec_bytes = n * sizeof(tp_record);
  const size_t seg_bytes = segs.size() * sizeof(tp_segment);
  // Reserved, and filled as the records leave their chunks (a resize would
  // touch every page while the chunks are all still held).
  img.bytes.reserve(sizeof(tp_image_header) + rec_bytes + seg_bytes);
  img.bytes.resize(sizeof(tp_image_header));
  // In time order, each record leaves the builder once it is in the image,
  // so the two are never held in full at once.
  for (size_t k = 0; k < n; ++k) {
    const size_t i = order.empty() ? k : order[k];
    tp_record& o = rec(i);
    while (marks_before < marks_.size() &&
           (marks_[marks_before].time_ns < o.time_ns ||
            (marks_[marks_before].time_ns == o.time_ns && marks_[marks_before].before <= i)))
      ++marks_before;
    o.phase = static_cast<uint32_t>(marks_before);
    if (!img.phases.empty()) ++img.phases[marks_before].records;
    o.time_ns -= t0;
    img.duration_ns = o.time_ns;
    slots.resolve(o, static_cast<uint32_t>(k), class_.empty() ? DeviceClass::kGeneric : static_cast<DeviceClass>(class_[i]));
    const auto* p = reinterpret_cast<const uint8_t*>(&o);
    img.bytes.insert(img.bytes.end(), p, p + sizeof o);
    if (order.empty() && (k + 1) % kChunk == 0) chunks_[k / kChunk].reset();
  }
  chunks_.clear();
  n_ = 0;
  std::vector<uint8_t>().swap(class_);
  if (synthesize) add_synthesized(img, spans, close_record);
  std::vector<Mark>().swap(marks_);
  for (const PlayerAccess& a : img.accesses)
    if (a.phase < img.phases.size()) ++img.phases[a.phase].accesses;

  img.records = static_cast<uint32_t>(n);
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
  std::memcpy(img.bytes.data(), &h, sizeof h);
  const auto* sp = reinterpret_cast<const uint8_t*>(segs.data());
  img.bytes.insert(img.bytes.end(), sp, sp + seg_bytes);
  return img;
}

void TraceImageBuilder::add_synthesized(TraceImage& img, const std::vector<MappingSpan>& spans,
                                        const std::vector<uint32_t>& close_record) {
  SynthResult made;
  try {
    made = synthesize_accesses(spans, synth_);
  } catch (const std::length_error& e) {
    throw TraceImageError(0, e.what());
  }
  // A made-up access is in the phase its time falls in.
  for (PlayerAccess& a : made.accesses) {
    const auto after = std::upper_bound(img.phases.begin() + (img.phases.empty() ? 0 : 1), img.phases.end(), a.time_ns,
                                        [](uint64_t t, const TracePhase& p) { return t < p.time_ns; });
    a.phase = img.phases.empty() ? 0 : static_cast<uint32_t>(after - img.phases.begin()) - 1;
  }
  std::vector<PlayerAccess> merged;
  merged.reserve(img.accesses.size() + made.accesses.size());
  // The trace's own accesses first at equal times (std::merge is stable).
  std::merge(img.accesses.begin(), img.accesses.end(), made.accesses.begin(), made.accesses.end(),
             std::back_inserter(merged),
             [](const PlayerAccess& a, const PlayerAccess& b) { return a.time_ns < b.time_ns; });
  img.accesses.swap(merged);
  img.accesses_synthesized = static_cast<uint32_t>(made.accesses.size());
  img.synthesized_late = made.late;

  // Every unmap waits for the last access to its slot, now in the merged order.
  std::vector<uint32_t> last_plus1(img.slots, 0);
  for (uint32_t i = 0; i < img.accesses.size(); ++i)
    if (img.accesses[i].slot != TP_NO_SLOT) last_plus1[img.accesses[i].slot] = i + 1;
  for (uint32_t slot = 0; slot < close_record.size(); ++slot) {
    if (close_record[slot] == TP_NO_SLOT) continue;
    const size_t at = sizeof(tp_image_header) + close_record[slot] * sizeof(tp_record) + offsetof(tp_record, aux);
    std::memcpy(img.bytes.data() + at, &last_plus1[slot], sizeof(uint32_t));
  }
}

TraceImage build_trace_image(const std::vector<Record>& records, uint32_t default_sid) {
  TraceImageBuilder b(default_sid);
  for (const Record& r : records) b.add(r);
  return b.finish();
}

}  // namespace smmu_vp
