// The Linux ftrace importer: every imported event in every layout the kernels
// print (include/trace/events/iommu.h, dma.h), both line prefixes (the trace
// file's and trace-cmd report's), StreamID attribution, malformed lines.
#include "dmatrace/ftrace_import.h"
#include "dmatrace/phases.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace smmu_vp::dmatrace {
namespace {

// The trace file's prefix (irq-info on) and trace-cmd report's.
const std::string kFile = "             fio-2345    [002] d..1.   712.345678: ";
const std::string kReport = "             fio-2345  [002]   712.345678: ";

struct Parser {
  explicit Parser(ImportOptions o = {}) : imp(std::move(o), "test.txt") {}
  bool parse(const std::string& line, uint64_t line_no = 1) { return imp.parse_line(line.data(), line.size(), line_no, r); }
  FtraceImporter imp;
  Record r;
};

// Parses `line`, which must import; returns the record.
Record one(const std::string& line, ImportOptions o = {}) {
  Parser p(std::move(o));
  EXPECT_TRUE(p.parse(line)) << line;
  return p.r;
}

// The TraceError message parsing `line` gives ("" when it parses).
std::string error_of(const std::string& line, uint64_t line_no = 7) {
  Parser p;
  try {
    p.parse(line, line_no);
  } catch (const TraceError& e) {
    EXPECT_EQ(e.line(), line_no);
    return e.what();
  }
  return "";
}

TEST(FtraceImport, TraceFilePrefix) {
  const Record r = one(kFile + "dma_map_page: 0000:01:00.0 dir=FROM_DEVICE dma_addr=fffc0000 size=4096 "
                               "phys_addr=8a2f3000 attrs=");
  EXPECT_EQ(r.op, Op::kMap);
  EXPECT_EQ(r.task, "fio");
  EXPECT_EQ(r.pid, 2345);
  EXPECT_EQ(r.cpu, 2);
  EXPECT_EQ(r.time_ns, 712345678000ull);
  EXPECT_EQ(r.dev, "0000:01:00.0");
  EXPECT_EQ(r.dir, Dir::kFromDevice);
  EXPECT_EQ(r.iova, 0xfffc0000ull);
  EXPECT_EQ(r.pa, 0x8a2f3000ull);
  EXPECT_EQ(r.size, 4096u);
  EXPECT_EQ(r.sid, 1u);  // the first device numbered: default_sid + 1
}

TEST(FtraceImport, TraceCmdReportPrefix) {
  // trace-cmd pads the event name; 9 decimals with a ns clock.
  const Record r = one(kReport + "dma_unmap_page:       0000:01:00.0 dir=TO_DEVICE dma_addr=fffc0000 size=512 "
                                 "attrs=SKIP_CPU_SYNC");
  EXPECT_EQ(r.op, Op::kUnmap);
  EXPECT_EQ(r.task, "fio");
  EXPECT_EQ(r.pid, 2345);
  EXPECT_EQ(r.cpu, 2);
  EXPECT_EQ(r.time_ns, 712345678000ull);
  EXPECT_EQ(r.iova, 0xfffc0000ull);
  EXPECT_EQ(r.size, 512u);
  EXPECT_EQ(r.dir, Dir::kToDevice);
  EXPECT_EQ(r.pa, kNoAddr);

  const Record n = one("fio-1 [000] 5.123456789: dma_unmap_page: nvme0 dir=NONE dma_addr=10 size=1 attrs=");
  EXPECT_EQ(n.time_ns, 5123456789ull);
  EXPECT_EQ(n.dir, Dir::kNone);
  // Extra columns before the timestamp, the tgid column, a counter clock.
  const Record t = one("fio-1 (    1) [003] dNh2. 77: dma_unmap_page: nvme0 dir=BIDIRECTIONAL dma_addr=10 size=1 attrs=");
  EXPECT_EQ(t.time_ns, 77u);
  EXPECT_EQ(t.cpu, 3);
  EXPECT_EQ(t.pid, 1);
  EXPECT_EQ(t.dir, Dir::kBidirectional);
}

TEST(FtraceImport, TaskNamesWithSpacesAndDashes) {
  const Record r = one("  my worker-thread -x-4242 [001] .... 1.000001: dma_sync_single_for_cpu: 0000:02:00.0 "
                       "dir=FROM_DEVICE dma_addr=1000 size=64");
  EXPECT_EQ(r.task, "my worker-thread -x");
  EXPECT_EQ(r.pid, 4242);
  EXPECT_EQ(r.time_ns, 1000001000u);
  const Record i = one("<idle>-0       [000] ..s1.  3.5: dma_sync_single_for_device: eth0 dir=TO_DEVICE dma_addr=2000 size=8");
  EXPECT_EQ(i.task, "<idle>");
  EXPECT_EQ(i.pid, 0);
  EXPECT_EQ(i.op, Op::kSyncForDevice);
  EXPECT_EQ(i.time_ns, 3500000000u);
  const Record k = one("kworker/u8:2-118 [003] 9.000000: dma_sync_single_for_device: eth0 dir=TO_DEVICE dma_addr=2000 size=8");
  EXPECT_EQ(k.task, "kworker/u8:2");
  EXPECT_EQ(k.pid, 118);
}

TEST(FtraceImport, IommuMapBothLayouts) {
  // Newer kernels print the IOVA range, older ones only its start.
  const Record n = one(kFile + "map: IOMMU: iova=0x00000000fffc0000 - 0x00000000fffc2000 paddr=0x000000008a2f3000 size=8192");
  EXPECT_EQ(n.op, Op::kIommuMap);
  EXPECT_EQ(n.iova, 0xfffc0000ull);
  EXPECT_EQ(n.pa, 0x8a2f3000ull);
  EXPECT_EQ(n.size, 8192u);
  // No device: the domain recovered for it (a first domain, numbered as a
  // device would be), or default_sid without recovery.
  EXPECT_EQ(n.sid, 1u);
  EXPECT_EQ(n.dev, "iommu-domain-1");
  ImportOptions flat;
  flat.recover_domains = false;
  const Record f = one(kFile + "map: IOMMU: iova=0x00000000fffc0000 - 0x00000000fffc2000 paddr=0x000000008a2f3000 size=8192",
                       flat);
  EXPECT_EQ(f.sid, 0u);
  EXPECT_EQ(f.dev, "");
  const Record o = one(kReport + "map:                  IOMMU: iova=0x00000000fffc0000 paddr=0x000000008a2f3000 size=4096");
  EXPECT_EQ(o.iova, 0xfffc0000ull);
  EXPECT_EQ(o.pa, 0x8a2f3000ull);
  EXPECT_EQ(o.size, 4096u);
  // Vendor trees that add the device.
  ImportOptions opt;
  opt.device_sids["ff000000.mdss"] = 9;
  const Record a = one(kFile + "map: IOMMU: dev=ff000000.mdss iova=0x0000000000100000 paddr=0x0000000080000000 size=4096", opt);
  EXPECT_EQ(a.dev, "ff000000.mdss");
  EXPECT_EQ(a.sid, 9u);
}

TEST(FtraceImport, IommuUnmapBothLayouts) {
  const Record n = one(kFile + "unmap: IOMMU: iova=0x00000000fffc0000 - 0x00000000fffc2000 size=8192 unmapped_size=4096");
  EXPECT_EQ(n.op, Op::kIommuUnmap);
  EXPECT_EQ(n.iova, 0xfffc0000ull);
  EXPECT_EQ(n.size, 4096u);  // what was unmapped
  EXPECT_EQ(n.pa, kNoAddr);
  const Record o = one(kReport + "unmap: IOMMU: iova=0x00000000fffc0000 size=8192 unmapped_size=8192");
  EXPECT_EQ(o.iova, 0xfffc0000ull);
  EXPECT_EQ(o.size, 8192u);
}

TEST(FtraceImport, IommuFaultAttachDetach) {
  const Record f = one(kFile + "io_page_fault: IOMMU:nvme 0000:01:00.0 iova=0x00000000deadb000 flags=0x0001");
  EXPECT_EQ(f.op, Op::kFault);
  EXPECT_EQ(f.dev, "0000:01:00.0");
  EXPECT_EQ(f.iova, 0xdeadb000ull);
  EXPECT_TRUE(f.write);
  const Record r = one(kFile + "io_page_fault: IOMMU:arm-smmu-v3 0000:02:00.0 iova=0x0000000000001000 flags=0x0000");
  EXPECT_FALSE(r.write);
  EXPECT_EQ(r.dev, "0000:02:00.0");
  const Record nodrv = one(kFile + "io_page_fault: IOMMU: 0000:02:00.0 iova=0x0000000000001000 flags=0x0002");
  EXPECT_EQ(nodrv.dev, "0000:02:00.0");
  EXPECT_FALSE(nodrv.write);

  Parser p;
  ASSERT_TRUE(p.parse(kFile + "attach_device_to_domain: IOMMU: device=0000:01:00.0"));
  EXPECT_EQ(p.r.op, Op::kAttach);
  EXPECT_EQ(p.r.dev, "0000:01:00.0");
  EXPECT_EQ(p.r.sid, 1u);
  ASSERT_TRUE(p.parse(kReport + "detach_device_from_domain: IOMMU: device=0000:01:00.0"));
  EXPECT_EQ(p.r.op, Op::kDetach);
  EXPECT_EQ(p.r.sid, 1u);
  // Not a field of ours: other lines keep nothing of the last record.
  EXPECT_EQ(p.r.iova, kNoAddr);
}

TEST(FtraceImport, DmaMapAndUnmapEveryVariant) {
  // dma_map_page/dma_map_resource (Linux 6.12), dma_map_phys (later).
  for (const char* ev : {"dma_map_page", "dma_map_resource", "dma_map_phys"}) {
    const Record r = one(kFile + ev + ": 0000:02:00.0 dir=TO_DEVICE dma_addr=ffffe000 size=1514 phys_addr=10badc0de "
                                      "attrs=WEAK_ORDERING|SKIP_CPU_SYNC");
    EXPECT_EQ(r.op, Op::kMap) << ev;
    EXPECT_EQ(r.iova, 0xffffe000ull);
    EXPECT_EQ(r.pa, 0x10badc0deull);
    EXPECT_EQ(r.size, 1514u);
    EXPECT_EQ(r.dir, Dir::kToDevice);
  }
  for (const char* ev : {"dma_unmap_page", "dma_unmap_resource", "dma_unmap_phys"}) {
    const Record r = one(kReport + ev + ": 0000:02:00.0 dir=FROM_DEVICE dma_addr=ffffe000 size=2048 attrs=");
    EXPECT_EQ(r.op, Op::kUnmap) << ev;
    EXPECT_EQ(r.iova, 0xffffe000ull);
    EXPECT_EQ(r.size, 2048u);
    EXPECT_EQ(r.dir, Dir::kFromDevice);
  }
}

TEST(FtraceImport, DmaMapSgLinux612Layout) {
  const Record r = one(kFile + "dma_map_sg: 0000:01:00.0 dir=FROM_DEVICE dma_addrs={0xfffa0000,0xfffb0000} "
                               "sizes={0x1000,0x2000} phys_addrs={0x8a000000,0x8b000000} attrs=");
  EXPECT_EQ(r.op, Op::kMapSg);
  EXPECT_EQ(r.iova, 0xfffa0000ull);
  EXPECT_EQ(r.size, 0x3000u);
  ASSERT_EQ(r.segs.size(), 2u);
  EXPECT_EQ(r.segs[0], (Segment{0x8a000000, 0x1000}));
  EXPECT_EQ(r.segs[1], (Segment{0x8b000000, 0x2000}));
}

TEST(FtraceImport, DmaMapSgNewerLayout) {
  // An IOMMU merged three physical segments into one IOVA range: the size is
  // shared out (the kernel does not print the physical lengths then).
  const Record r = one(kReport + "dma_map_sg: 0000:01:00.0 dir=TO_DEVICE nents=3/3 ents=1/1 dma_addrs={0xfff00000} "
                                 "sizes={0x3000} phys_addrs={0x8a000000, 0x8c000000, 0x8e000000} attrs=");
  EXPECT_EQ(r.iova, 0xfff00000ull);
  EXPECT_EQ(r.size, 0x3000u);
  ASSERT_EQ(r.segs.size(), 3u);
  EXPECT_EQ(r.segs[2], (Segment{0x8e000000, 0x1000}));
  uint64_t sum = 0;
  for (const Segment& s : r.segs) sum += s.len;
  EXPECT_EQ(sum, r.size);
  // Truncated lists: what was printed.
  const Record t = one(kReport + "dma_map_sg: 0000:01:00.0 dir=TO_DEVICE nents=128/300 ents=1/1 [TRUNCATED] "
                                 "dma_addrs={0xfff00000} sizes={0x12c000} phys_addrs={0x1000,0x2000} attrs=");
  EXPECT_EQ(t.size, 0x12c000u);
  EXPECT_EQ(t.segs.size(), 2u);
  EXPECT_NE(error_of(kReport + "dma_map_sg: d dir=NONE nents=3 ents=1/1 dma_addrs={} sizes={} phys_addrs={} attrs="), "");
}

TEST(FtraceImport, DmaUnmapSgTakesTheIovaOfItsMapping) {
  Parser p;
  ASSERT_TRUE(p.parse(kFile + "dma_map_sg: 0000:01:00.0 dir=FROM_DEVICE dma_addrs={0xfffa0000} sizes={0x2000} "
                              "phys_addrs={0x8a000000,0x8a001000} attrs="));
  ASSERT_TRUE(p.parse(kFile + "dma_unmap_sg: 0000:01:00.0 dir=FROM_DEVICE phys_addrs={0x8a000000,0x8a001000} attrs="));
  EXPECT_EQ(p.r.op, Op::kUnmapSg);
  EXPECT_EQ(p.r.iova, 0xfffa0000ull);
  EXPECT_EQ(p.r.size, 0x2000u);
  EXPECT_EQ(p.r.segs.size(), 2u);
  // Mapped before the capture: IOVA unknown, the physical segments kept.
  ASSERT_TRUE(p.parse(kFile + "dma_unmap_sg: 0000:01:00.0 dir=FROM_DEVICE phys_addrs={0x8a000000,0x8a001000} attrs="));
  EXPECT_EQ(p.r.iova, kNoAddr);
  EXPECT_EQ(p.r.size, 0u);
  ASSERT_EQ(p.r.segs.size(), 2u);
  EXPECT_EQ(p.r.segs[1].pa, 0x8a001000u);
}

TEST(FtraceImport, DmaAllocFreeEveryVariant) {
  for (const char* ev : {"dma_alloc", "dma_alloc_pages"}) {
    const Record r = one(kFile + ev + ": 0000:01:00.0 dir=BIDIRECTIONAL dma_addr=ffff0000 size=16384 "
                                      "virt_addr=00000000a1b2c3d4 flags=GFP_KERNEL|__GFP_ZERO attrs=");
    EXPECT_EQ(r.op, Op::kAlloc) << ev;
    EXPECT_EQ(r.iova, 0xffff0000ull);
    EXPECT_EQ(r.size, 16384u);
    EXPECT_EQ(r.pa, kNoAddr);
  }
  // Linux 6.12's dma_alloc prints a direction it never set.
  EXPECT_EQ(one(kFile + "dma_alloc: d dir=0x7f dma_addr=1000 size=4096 virt_addr=x flags=GFP_KERNEL attrs=").dir, Dir::kNone);
  const Record s = one(kFile + "dma_alloc_sgt: 0000:01:00.0 dir=FROM_DEVICE dma_addr=ffe00000 size=65536 "
                               "phys_addrs={0x90000000,0x90010000} flags=GFP_KERNEL attrs=");
  EXPECT_EQ(s.op, Op::kAlloc);
  EXPECT_EQ(s.pa, 0x90000000u);
  EXPECT_EQ(s.size, 65536u);
  for (const char* ev : {"dma_free", "dma_free_pages"}) {
    const Record r = one(kFile + ev + ": 0000:01:00.0 dir=BIDIRECTIONAL dma_addr=ffff0000 size=16384 "
                                      "virt_addr=00000000a1b2c3d4 attrs=");
    EXPECT_EQ(r.op, Op::kFree) << ev;
    EXPECT_EQ(r.iova, 0xffff0000ull);
    EXPECT_EQ(r.size, 16384u);
  }
  const Record f = one(kFile + "dma_free_sgt: 0000:01:00.0 dir=FROM_DEVICE dma_addr=ffe00000 size=65536 "
                               "phys_addrs={0x90000000,0x90010000}");
  EXPECT_EQ(f.op, Op::kFree);
  EXPECT_EQ(f.iova, 0xffe00000u);
}

TEST(FtraceImport, DmaSyncEveryVariant) {
  EXPECT_EQ(one(kFile + "dma_sync_single_for_cpu: n dir=FROM_DEVICE dma_addr=1000 size=64").op, Op::kSyncForCpu);
  EXPECT_EQ(one(kFile + "dma_sync_single_for_device: n dir=TO_DEVICE dma_addr=1000 size=64").op, Op::kSyncForDevice);
  const Record c = one(kFile + "dma_sync_sg_for_cpu: n dir=FROM_DEVICE dma_addrs={0x1000,0x3000} sizes={0x200,0x100}");
  EXPECT_EQ(c.op, Op::kSyncForCpu);
  EXPECT_EQ(c.iova, 0x1000u);
  EXPECT_EQ(c.size, 0x300u);
  const Record d = one(kFile + "dma_sync_sg_for_device: n dir=TO_DEVICE dma_addrs={0x1000} sizes={0x40}");
  EXPECT_EQ(d.op, Op::kSyncForDevice);
  EXPECT_EQ(d.size, 0x40u);
}

TEST(FtraceImport, HugeValues) {
  const Record r = one(kFile + "dma_map_page: d dir=TO_DEVICE dma_addr=ffffffffffffffff size=18446744073709551615 "
                               "phys_addr=fffffffffffff000 attrs=");
  EXPECT_EQ(r.iova, ~0ull);
  EXPECT_EQ(r.size, ~0ull);
  EXPECT_EQ(r.pa, 0xfffffffffffff000ull);
  const std::string e = error_of(kFile + "dma_map_page: d dir=TO_DEVICE dma_addr=1ffffffffffffffff size=1 phys_addr=0 attrs=");
  EXPECT_NE(e.find("field 'dma_addr'"), std::string::npos) << e;
  EXPECT_NE(e.find("64 bits"), std::string::npos) << e;
  EXPECT_NE(error_of(kFile + "dma_map_page: d dir=TO_DEVICE dma_addr=1 size=18446744073709551616 phys_addr=0 attrs=")
                .find("field 'size'"),
            std::string::npos);
}

// Found by fuzz_ftrace_import: a CPU column past int32_t (or a pid past
// int64_t) used to wrap to a negative number that our own format refuses.
TEST(FtraceImport, CpuAndPidLargerThanTheirFieldsAreRefused) {
  const Record r = one("fio-9223372036854775807 [2147483647] 1.5: dma_unmap_page: d dir=TO_DEVICE dma_addr=1 size=1 attrs=");
  EXPECT_EQ(r.cpu, 2147483647);
  EXPECT_EQ(r.pid, 9223372036854775807);
  std::string e = error_of("fio-2812 [4125625026] 1.5: dma_unmap_page: d dir=TO_DEVICE dma_addr=1 size=1 attrs=");
  EXPECT_NE(e.find("field 'cpu'"), std::string::npos) << e;
  EXPECT_NE(e.find("larger than 2147483647"), std::string::npos) << e;
  e = error_of("fio-9223372036854775808 [002] 1.5: dma_unmap_page: d dir=TO_DEVICE dma_addr=1 size=1 attrs=");
  EXPECT_NE(e.find("field 'pid'"), std::string::npos) << e;
}

TEST(FtraceImport, CrLf) {
  const Record r = one(kFile + "dma_unmap_page: d dir=TO_DEVICE dma_addr=1000 size=64 attrs=\r\n");
  EXPECT_EQ(r.size, 64u);
  const Record a = one(kFile + "attach_device_to_domain: IOMMU: device=0000:01:00.0\r");
  EXPECT_EQ(a.dev, "0000:01:00.0");
}

TEST(FtraceImport, MalformedLinesNameTheLineAndTheField) {
  std::string e = error_of(kFile + "dma_map_page: 0000:01:00.0 dir=TO_DEVICE dma_addr=fffc0000 size=12x4 phys_addr=0 attrs=", 42);
  EXPECT_NE(e.find("test.txt:42"), std::string::npos) << e;
  EXPECT_NE(e.find("event dma_map_page: field 'size'"), std::string::npos) << e;
  EXPECT_NE(e.find("'12x4'"), std::string::npos) << e;
  e = error_of(kFile + "dma_map_page: 0000:01:00.0 dir=TO_DEVICE dma_addr=fffc0000 phys_addr=0 attrs=");
  EXPECT_NE(e.find("field 'size': missing"), std::string::npos) << e;
  e = error_of(kFile + "dma_unmap_page: 0000:01:00.0 dir=SIDEWAYS dma_addr=1 size=1 attrs=");
  EXPECT_NE(e.find("field 'dir'"), std::string::npos) << e;
  e = error_of(kFile + "dma_map_sg: d dir=NONE dma_addrs={0x1,0x2} sizes={0x1} phys_addrs={} attrs=");
  EXPECT_NE(e.find("field 'sizes'"), std::string::npos) << e;
  e = error_of(kFile + "dma_map_sg: d dir=NONE dma_addrs={0x1,0x2 sizes={0x1} phys_addrs={} attrs=");
  EXPECT_NE(e.find("field 'dma_addrs'"), std::string::npos) << e;
  e = error_of(kFile + "dma_unmap_page: dir=TO_DEVICE dma_addr=1 size=1 attrs=");
  EXPECT_NE(e.find("field 'device'"), std::string::npos) << e;
  e = error_of(kFile + "map: IOMMU: iova=0xzz paddr=0x0 size=1");
  EXPECT_NE(e.find("event map: field 'iova'"), std::string::npos) << e;
  e = error_of("fio-12 [001] 1.2.3: dma_unmap_page: d dir=TO_DEVICE dma_addr=1 size=1 attrs=");
  EXPECT_NE(e.find("field 'timestamp'"), std::string::npos) << e;
  e = error_of("fio [001] 1.5: dma_unmap_page: d dir=TO_DEVICE dma_addr=1 size=1 attrs=");
  EXPECT_NE(e.find("field 'pid'"), std::string::npos) << e;
  // A file cut in the middle of a line.
  e = error_of(kFile + "dma_map_page: 0000:01:00.0 dir=TO_DEVICE dma_addr=fff");
  EXPECT_NE(e.find("field 'size': missing"), std::string::npos) << e;
}

TEST(FtraceImport, SkipMalformedCounts) {
  ImportOptions opt;
  opt.skip_malformed = true;
  Parser p(opt);
  EXPECT_FALSE(p.parse(kFile + "dma_map_page: d dir=TO_DEVICE dma_addr=zz size=1 phys_addr=0 attrs="));
  EXPECT_FALSE(p.parse(kFile + "dma_unmap_page: d dir=TO_DEVICE"));
  EXPECT_TRUE(p.parse(kFile + "dma_unmap_page: d dir=TO_DEVICE dma_addr=1 size=1 attrs="));
  EXPECT_EQ(p.imp.stats().malformed_skipped, 2u);
  EXPECT_EQ(p.imp.stats().lines, 3u);
  EXPECT_EQ(p.imp.stats().by_event.at("dma_unmap_page"), 1u);
  EXPECT_EQ(p.imp.stats().by_event.count("dma_map_page"), 0u);
}

TEST(FtraceImport, OtherLinesAndUnknownEvents) {
  Parser p;
  for (const char* l : {"# tracer: nop", "#", "#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION", "",
                        "   ", "cpus=4", "version = 6", "CPU:2 [LOST 118 EVENTS]", "CPU 1 is empty",
                        "##### CPU 3 buffer started ####", "\r"})
    EXPECT_FALSE(p.parse(l)) << l;
  EXPECT_EQ(p.imp.stats().other_lines, 11u);
  EXPECT_FALSE(p.parse(kFile + "sched_switch: prev_comm=fio prev_pid=2345 prev_prio=120 prev_state=S ==> next_comm=swapper/2"));
  EXPECT_FALSE(p.parse(kFile + "add_device_to_group: IOMMU: groupID=3 device=0000:01:00.0"));
  EXPECT_FALSE(p.parse(kFile + "dma_map_sg_err: d dir=TO_DEVICE dma_addrs={0x1} err=-12 attrs="));
  // Another subsystem's "map" event is not iommu's.
  EXPECT_FALSE(p.parse(kFile + "map: vma=0x1234 len=4096"));
  EXPECT_EQ(p.imp.stats().unknown_events, 4u);
  EXPECT_EQ(p.imp.stats().lines, 15u);
  EXPECT_TRUE(p.imp.stats().by_event.empty());
}

// trace_marker writes: the trace file's "tracing_mark_write: TEXT" and
// trace-cmd report's "print: tracing_mark_write: TEXT" become mark records.
TEST(FtraceImport, TraceMarkerLinesInBothLayouts) {
  const Record f = one("            init-1       [001] .....     4.232284: tracing_mark_write: phase nvme-read-4k");
  EXPECT_EQ(f.op, Op::kMark);
  EXPECT_EQ(f.text, "phase nvme-read-4k");
  EXPECT_EQ(f.task, "init");
  EXPECT_EQ(f.pid, 1);
  EXPECT_EQ(f.cpu, 1);
  EXPECT_EQ(f.time_ns, 4232284000ull);
  EXPECT_EQ(f.sid, kNoSid);
  EXPECT_EQ(f.iova, kNoAddr);
  EXPECT_EQ(phase_name(f), "nvme-read-4k");

  const Record r = one(kReport + "print:                tracing_mark_write: phase blk write, 64 KiB  ");
  EXPECT_EQ(r.op, Op::kMark);
  EXPECT_EQ(r.text, "phase blk write, 64 KiB");  // trailing blanks dropped, inner ones kept
  EXPECT_EQ(r.time_ns, 712345678000ull);
  EXPECT_EQ(phase_name(r), "blk write, 64 KiB");

  // Any text is a marker (only "phase NAME" opens a phase); an empty one too.
  EXPECT_EQ(one(kFile + "tracing_mark_write: TRACE_MARKER_START").text, "TRACE_MARKER_START");
  EXPECT_EQ(one(kFile + "tracing_mark_write:").text, "");
  EXPECT_EQ(one(kFile + "tracing_mark_write: a=b {x").text, "a=b {x");  // free text, not key=value

  // Other print events (trace_printk) are no markers; a marker is no unknown event.
  Parser p;
  EXPECT_FALSE(p.parse(kReport + "print:                __schedule: Pick userspin"));
  EXPECT_FALSE(p.parse(kFile + "bprint: foo: bar"));
  EXPECT_TRUE(p.parse(kFile + "tracing_mark_write: phase x"));
  EXPECT_EQ(p.imp.stats().unknown_events, 2u);
  EXPECT_EQ(p.imp.stats().by_event.at("tracing_mark_write"), 1u);
}

TEST(FtraceImport, DevicesAreNumberedInOrderOfAppearance) {
  ImportOptions opt;
  opt.default_sid = 4;
  opt.device_sids["0000:02:00.0"] = 6;  // numbering skips it
  Parser p(opt);
  auto sid_of = [&](const std::string& dev) {
    EXPECT_TRUE(p.parse(kFile + "dma_unmap_page: " + dev + " dir=TO_DEVICE dma_addr=1 size=1 attrs="));
    return p.r.sid;
  };
  EXPECT_EQ(sid_of("0000:01:00.0"), 5u);
  EXPECT_EQ(sid_of("0000:02:00.0"), 6u);
  EXPECT_EQ(sid_of("0000:03:00.0"), 7u);
  EXPECT_EQ(sid_of("0000:01:00.0"), 5u);
  EXPECT_TRUE(p.parse(kFile + "unmap: IOMMU: iova=0x0000000000001000 - 0x0000000000002000 size=4096 unmapped_size=4096"));
  EXPECT_EQ(p.r.sid, 4u);
  const auto& ds = p.imp.stats().device_sids;
  ASSERT_EQ(ds.size(), 3u);
  EXPECT_EQ(ds.at("0000:01:00.0"), 5u);
  EXPECT_EQ(ds.at("0000:02:00.0"), 6u);
  EXPECT_EQ(ds.at("0000:03:00.0"), 7u);

  ImportOptions flat;
  flat.default_sid = 3;
  flat.number_devices = false;
  flat.device_sids["0000:02:00.0"] = 8;
  EXPECT_EQ(one(kFile + "dma_unmap_page: 0000:01:00.0 dir=TO_DEVICE dma_addr=1 size=1 attrs=", flat).sid, 3u);
  EXPECT_EQ(one(kFile + "dma_unmap_page: 0000:02:00.0 dir=TO_DEVICE dma_addr=1 size=1 attrs=", flat).sid, 8u);
}

// import_ftrace: whole files, through the writer and back through the reader.
namespace fs = std::filesystem;

fs::path temp_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("ftrace-import-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::vector<Record> read_all(const fs::path& p) {
  TraceReader r(p.string());
  std::vector<Record> v;
  Record rec;
  while (r.next(rec)) v.push_back(rec);
  return v;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_text(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

void write_gz(const fs::path& p, const std::string& text) {
  gzFile g = gzopen(p.string().c_str(), "wb");
  ASSERT_NE(g, nullptr);
  ASSERT_EQ(gzwrite(g, text.data(), static_cast<unsigned>(text.size())), static_cast<int>(text.size()));
  gzclose(g);
}

const std::string kSamples = std::string(SMMU_VP_SOURCE_DIR) + "/traces/samples/";

TEST(FtraceImportFile, NvmeFioSample) {
  const fs::path d = temp_dir("nvme");
  const ImportStats st = import_ftrace(kSamples + "ftrace_nvme_fio.txt", (d / "out.trace").string(), {});
  EXPECT_EQ(st.lines, 400u);
  EXPECT_EQ(st.other_lines, 12u);
  EXPECT_EQ(st.records, 388u);
  EXPECT_EQ(st.unknown_events, 0u);
  EXPECT_EQ(st.by_event.at("dma_map_page"), 100u);
  EXPECT_EQ(st.by_event.at("dma_unmap_page"), 100u);
  EXPECT_EQ(st.by_event.at("dma_map_sg"), 24u);
  EXPECT_EQ(st.by_event.at("dma_unmap_sg"), 24u);
  EXPECT_EQ(st.by_event.at("dma_sync_single_for_cpu"), 70u);
  EXPECT_EQ(st.by_event.at("dma_sync_single_for_device"), 70u);
  ASSERT_EQ(st.device_sids.size(), 2u);
  EXPECT_EQ(st.device_sids.at("0000:01:00.0"), 1u);
  EXPECT_EQ(st.device_sids.at("0000:02:00.0"), 2u);
  EXPECT_FALSE(fs::exists(d / "out.trace.tmp"));

  const std::vector<Record> v = read_all(d / "out.trace");
  ASSERT_EQ(v.size(), 388u);
  uint64_t last = 0;
  std::map<uint64_t, uint64_t> live;  // every NVMe sg unmap found its mapping
  for (const Record& r : v) {
    EXPECT_GE(r.time_ns, last);
    last = r.time_ns;
    EXPECT_GE(r.cpu, 0);
    EXPECT_LE(r.cpu, 3);
    EXPECT_FALSE(r.task.empty());
    if (r.op == Op::kMapSg) {
      EXPECT_EQ(r.size, 0x10000u);
      EXPECT_EQ(r.segs.size(), 16u);
      EXPECT_EQ(r.iova % 0x10000, 0u);
      EXPECT_LT(r.iova, 1ull << 32);
    }
    if (r.op == Op::kUnmapSg) {
      EXPECT_NE(r.iova, kNoAddr);
      EXPECT_EQ(r.size, 0x10000u);
    }
  }
  EXPECT_EQ(v.front().time_ns, 1523417328000ull);
  EXPECT_EQ(v.front().task, "fio");
  EXPECT_EQ(v.front().pid, 2811);
}

// A capture with markers: every marker kept as a record in its place, and the
// records between two "phase" markers in the phase of the first.
TEST(FtraceImportFile, MarkersDelimitPhases) {
  const fs::path d = temp_dir("marks");
  const std::string map = "dma_map_page: 0000:01:00.0 dir=FROM_DEVICE dma_addr=fffc0000 size=4096 phys_addr=8a2f3000 attrs=\n";
  const std::string unmap = "dma_unmap_page: 0000:01:00.0 dir=FROM_DEVICE dma_addr=fffc0000 size=4096 attrs=\n";
  const std::string text = "# tracer: nop\n"
                           "  fio-9 [000] ....  1.000001: " + map +
                           "  fio-9 [000] ....  1.000002: " + unmap +
                           "  sh-1 [001] ....  2.000000: tracing_mark_write: phase read\n"
                           "  fio-9 [000] ....  2.000001: " + map +
                           "  fio-9 [000] ....  2.000002: " + unmap +
                           "  fio-9 [000] ....  2.000003: " + map +
                           "  sh-1 [001] ....  2.500000: tracing_mark_write: just a note\n"
                           "  fio-9 [000] ....  2.600000: " + unmap +
                           "  sh-1 [001] ....  3.000000: tracing_mark_write: phase write\n"
                           "  fio-9 [000] ....  3.000001: " + map;
  write_text(d / "in.txt", text);
  const ImportStats st = import_ftrace((d / "in.txt").string(), (d / "out.trace").string(), {});
  EXPECT_EQ(st.records, 10u);
  EXPECT_EQ(st.unknown_events, 0u);
  EXPECT_EQ(st.by_event.at("tracing_mark_write"), 3u);
  const std::vector<Record> v = read_all(d / "out.trace");
  ASSERT_EQ(v.size(), 10u);
  EXPECT_EQ(v[2].op, Op::kMark);
  EXPECT_EQ(v[2].text, "phase read");
  EXPECT_EQ(v[2].time_ns, 2000000000ull);
  EXPECT_EQ(v[6].text, "just a note");
  EXPECT_EQ(v[8].text, "phase write");

  PhaseSplitter split;
  for (size_t i = 0; i < v.size(); ++i) split.add(v[i], i + 3);
  const std::vector<PhaseSummary> ph = split.phases();
  ASSERT_EQ(ph.size(), 3u);
  EXPECT_EQ(ph[0].name, kLeadingPhaseName);
  EXPECT_EQ(ph[0].records, 2u);
  EXPECT_EQ(ph[1].name, "read");
  EXPECT_EQ(ph[1].records, 5u);  // the note is a record of the phase
  EXPECT_EQ(ph[1].by_op.at(Op::kMap), 2u);
  EXPECT_EQ(ph[1].by_op.at(Op::kUnmap), 2u);
  EXPECT_EQ(ph[1].by_op.at(Op::kMark), 1u);
  EXPECT_EQ(ph[1].bytes_mapped, 8192u);
  EXPECT_EQ(ph[1].t_max - ph[1].t_min, 600000000u);
  EXPECT_EQ(ph[2].name, "write");
  EXPECT_EQ(ph[2].records, 1u);
  EXPECT_EQ(ph[2].mark_line, 11u);
}

// The kernel captures' markers (scripts/kernel-capture-init.sh): six phases,
// each marker kept where the kernel put it.
TEST(FtraceImportFile, Linux612CaptureKeepsItsSixMarkers) {
  const fs::path d = temp_dir("k612");
  const ImportStats st =
      import_ftrace(kSamples + "ftrace_linux-6.12_strict.txt.gz", (d / "out.trace").string(), {});
  EXPECT_EQ(st.by_event.at("tracing_mark_write"), 6u);
  EXPECT_EQ(st.unknown_events, 3u);  // before: 9, the six markers among them
  const std::vector<Record> v = read_all(d / "out.trace");
  PhaseSplitter split;
  std::vector<std::string> names;
  std::vector<uint64_t> times;
  for (size_t i = 0; i < v.size(); ++i) {
    split.add(v[i], i);
    if (v[i].op == Op::kMark) {
      names.push_back(v[i].text);
      times.push_back(v[i].time_ns);
    }
  }
  EXPECT_EQ(names, (std::vector<std::string>{"phase nvme-read-4k", "phase nvme-read-128k", "phase blk-write-64k",
                                             "phase blk-read-4k", "phase net-ping", "phase end"}));
  EXPECT_EQ(times.front(), 4232284000ull);
  EXPECT_EQ(times.back(), 5696094000ull);
  const std::vector<PhaseSummary> ph = split.phases();
  ASSERT_EQ(ph.size(), 7u);
  EXPECT_EQ(ph[0].name, kLeadingPhaseName);
  // The NVMe 4 KiB reads: 512 maps and unmaps of a page each.
  EXPECT_EQ(ph[1].name, "nvme-read-4k");
  EXPECT_EQ(ph[1].by_op.at(Op::kMap), 512u);
  EXPECT_EQ(ph[1].by_op.at(Op::kUnmap), 512u);
  // The 128 KiB reads: scatter lists.
  EXPECT_EQ(ph[2].by_op.at(Op::kMapSg), 64u);
  EXPECT_EQ(ph[2].by_op.count(Op::kMap), 0u);
  EXPECT_EQ(ph[6].name, "end");
  EXPECT_EQ(ph[6].records, 0u);
}

TEST(FtraceImportFile, OldIommuSample) {
  const fs::path d = temp_dir("old");
  ImportOptions opt;
  opt.default_sid = 7;
  opt.device_sids["0000:03:00.0"] = 3;
  const ImportStats st = import_ftrace(kSamples + "ftrace_iommu_old.txt", (d / "out.trace.gz").string(), opt);
  EXPECT_EQ(st.lines, 71u);
  EXPECT_EQ(st.other_lines, 2u);  // cpus=4, version = 6
  EXPECT_EQ(st.unknown_events, 1u);  // remove_device_from_group
  EXPECT_EQ(st.records, 68u);
  EXPECT_EQ(st.by_event.at("map"), 32u);
  EXPECT_EQ(st.by_event.at("unmap"), 32u);
  EXPECT_EQ(st.by_event.at("io_page_fault"), 2u);
  EXPECT_EQ(st.by_event.at("attach_device_to_domain"), 1u);
  EXPECT_EQ(st.by_event.at("detach_device_from_domain"), 1u);
  // Written compressed (the name ends in .gz) and read back.
  const std::string raw = slurp(d / "out.trace.gz");
  ASSERT_GE(raw.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(raw[0]), 0x1fu);
  const std::vector<Record> v = read_all(d / "out.trace.gz");
  ASSERT_EQ(v.size(), 68u);
  EXPECT_EQ(v[0].op, Op::kAttach);
  EXPECT_EQ(v[0].sid, 3u);
  EXPECT_EQ(v[0].task, "qemu-system-aar");
  EXPECT_EQ(v[1].op, Op::kIommuMap);
  // iommu:map names no device: the domain recovered, which the device
  // attached just before takes.
  EXPECT_EQ(v[1].sid, 3u);
  EXPECT_EQ(v[1].dev, "0000:03:00.0");
  EXPECT_EQ(st.recovery.maps, 32u);
  EXPECT_EQ(st.recovery.new_domains, 1u);
  EXPECT_EQ(st.recovery.unmaps_unique, 32u);
  EXPECT_EQ(v[1].iova, 0x40000000u);
  EXPECT_EQ(v[1].pa, 0xa40000000u);
  EXPECT_EQ(v[1].size, 0x200000u);
  uint64_t mapped = 0, unmapped = 0;
  int faults = 0;
  for (const Record& r : v) {
    if (r.op == Op::kIommuMap) mapped += r.size;
    if (r.op == Op::kIommuUnmap) unmapped += r.size;
    if (r.op == Op::kFault) {
      EXPECT_EQ(r.task, "irq/23-arm-smmu");
      EXPECT_EQ(r.pid, 187);
      EXPECT_EQ(r.write, faults == 0);
      ++faults;
    }
  }
  EXPECT_EQ(mapped, unmapped);
  EXPECT_EQ(mapped, 24u * 0x200000 + 8u * 0x1000);
  EXPECT_EQ(v.back().op, Op::kDetach);
}

TEST(FtraceImportFile, GzipInputAndCrLf) {
  const fs::path d = temp_dir("gz");
  std::string text = slurp(kSamples + "ftrace_iommu_old.txt");
  std::string crlf;
  for (char c : text) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  write_gz(d / "in.txt.gz", crlf);
  const ImportStats st = import_ftrace((d / "in.txt.gz").string(), (d / "out.trace").string(), {});
  EXPECT_EQ(st.records, 68u);
  EXPECT_EQ(st.lines, 71u);
  EXPECT_EQ(read_all(d / "out.trace").size(), 68u);
}

TEST(FtraceImportFile, LastLineWithoutNewline) {
  const fs::path d = temp_dir("nonl");
  write_text(d / "in.txt", kFile + "dma_unmap_page: d dir=TO_DEVICE dma_addr=1000 size=64 attrs=\n" + kFile +
                               "dma_unmap_page: d dir=TO_DEVICE dma_addr=2000 size=64 attrs=");
  const ImportStats st = import_ftrace((d / "in.txt").string(), (d / "out.trace").string(), {});
  EXPECT_EQ(st.records, 2u);
  EXPECT_EQ(read_all(d / "out.trace").at(1).iova, 0x2000u);
}

// A line of 1 MiB or more (a binary file, a gzip not named .gz) once made
// the reader grow its buffer while still pointing into the old one: a
// crash. It is an error naming the line, and the output is not touched.
TEST(FtraceImportFile, ALineOfAMebibyteIsAnErrorNotACrash) {
  const fs::path d = temp_dir("longline");
  write_text(d / "in.txt", kFile + "dma_unmap_page: d dir=TO_DEVICE dma_addr=1000 size=64 attrs=\n" +
                               std::string(1200000, 'a') + "\n");
  write_text(d / "out.trace", "previous contents\n");
  try {
    import_ftrace((d / "in.txt").string(), (d / "out.trace").string(), {});
    FAIL() << "no error";
  } catch (const TraceError& e) {
    EXPECT_EQ(e.line(), 2u);
    EXPECT_NE(std::string(e.what()).find("longer than 1 MiB"), std::string::npos) << e.what();
  }
  EXPECT_EQ(slurp(d / "out.trace"), "previous contents\n");
}

// The read buffer bounds a line (ImportOptions::read_buffer_bytes, small in
// the fuzz harness): lines that fit are imported across many refills, one
// that does not is the same error, naming the buffer's size.
TEST(FtraceImportFile, TheReadBufferBoundsALine) {
  const fs::path d = temp_dir("smallbuffer");
  std::string text;
  for (int i = 0; i < 200; ++i)
    text += kFile + "dma_unmap_page: d dir=TO_DEVICE dma_addr=" + std::to_string(1000 + i) + " size=64 attrs=\n";
  write_text(d / "in.txt", text);
  ImportOptions opt;
  opt.read_buffer_bytes = 4096;
  EXPECT_EQ(import_ftrace((d / "in.txt").string(), (d / "out.trace").string(), opt).records, 200u);
  write_text(d / "long.txt", text + std::string(5000, 'a') + "\n");
  try {
    import_ftrace((d / "long.txt").string(), (d / "out2.trace").string(), opt);
    FAIL() << "no error";
  } catch (const TraceError& e) {
    EXPECT_EQ(e.line(), 201u);
    EXPECT_NE(std::string(e.what()).find("longer than 4 KiB"), std::string::npos) << e.what();
  }
}

// The output is replaced by a rename: never over a symlink, a device or a
// FIFO (as root, `-o /dev/null` would have replaced the system's /dev/null).
TEST(FtraceImportFile, AnOutputThatIsNotARegularFileIsLeftAlone) {
  const fs::path d = temp_dir("notregular");
  write_text(d / "in.txt", kFile + "dma_unmap_page: d dir=TO_DEVICE dma_addr=1000 size=64 attrs=\n");
  write_text(d / "target", "kept\n");
  fs::create_symlink(d / "target", d / "link");
  for (const fs::path& out : {d / "link", fs::path("/dev/null")}) {
    try {
      import_ftrace((d / "in.txt").string(), out.string(), {});
      ADD_FAILURE() << out << ": no error";
    } catch (const TraceError& e) {
      EXPECT_NE(std::string(e.what()).find("not a regular file"), std::string::npos) << e.what();
    }
  }
  EXPECT_TRUE(fs::is_symlink(d / "link"));
  EXPECT_EQ(slurp(d / "target"), "kept\n");
}

TEST(FtraceImportFile, InputWithoutAnyFtraceEventIsAnError) {
  const fs::path d = temp_dir("notftrace");
  write_text(d / "in.txt", "hello\nthis is not a trace\n\x01\x02\x03\n");
  try {
    import_ftrace((d / "in.txt").string(), (d / "out.trace").string(), {});
    FAIL() << "no error";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("no ftrace event line in 3 lines"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(d / "out.trace"));
}

TEST(FtraceImportFile, TruncatedFileIsAnErrorNamingTheLastLineAndNoOutputIsLeft) {
  const fs::path d = temp_dir("trunc");
  std::string text = slurp(kSamples + "ftrace_nvme_fio.txt");
  text.resize(text.size() - 60);  // cut inside the last line's fields
  write_text(d / "in.txt", text);
  write_text(d / "out.trace", "previous contents\n");
  try {
    import_ftrace((d / "in.txt").string(), (d / "out.trace").string(), {});
    FAIL() << "no error";
  } catch (const TraceError& e) {
    EXPECT_EQ(e.line(), 400u);
    EXPECT_NE(std::string(e.what()).find("in.txt:400"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("field '"), std::string::npos) << e.what();
  }
  EXPECT_EQ(slurp(d / "out.trace"), "previous contents\n");  // untouched
  EXPECT_FALSE(fs::exists(d / "out.trace.tmp"));
  // Skipping the malformed line imports the rest.
  ImportOptions opt;
  opt.skip_malformed = true;
  const ImportStats st = import_ftrace((d / "in.txt").string(), (d / "out.trace").string(), opt);
  EXPECT_EQ(st.malformed_skipped, 1u);
  EXPECT_EQ(st.records, 387u);
  EXPECT_EQ(read_all(d / "out.trace").size(), 387u);
}

TEST(FtraceImportFile, TruncatedGzipIsAnError) {
  const fs::path d = temp_dir("truncgz");
  write_gz(d / "in.txt.gz", slurp(kSamples + "ftrace_nvme_fio.txt"));
  std::string gz = slurp(d / "in.txt.gz");
  write_text(d / "cut.txt.gz", gz.substr(0, gz.size() / 2));
  try {
    import_ftrace((d / "cut.txt.gz").string(), (d / "out.trace").string(), {});
    FAIL() << "no error";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("cut.txt.gz"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(d / "out.trace"));
  EXPECT_FALSE(fs::exists(d / "out.trace.tmp"));
}

TEST(FtraceImportFile, UnreadableInputAndUnwritableOutput) {
  const fs::path d = temp_dir("io");
  EXPECT_THROW(import_ftrace((d / "missing.txt").string(), (d / "out.trace").string(), {}), TraceError);
  EXPECT_FALSE(fs::exists(d / "out.trace"));
  EXPECT_THROW(import_ftrace(kSamples + "ftrace_iommu_old.txt", (d / "no" / "such" / "dir.trace").string(), {}),
               TraceError);
}

TEST(FtraceImportFile, ProgressIsReported) {
  const fs::path d = temp_dir("progress");
  std::string text;
  const std::string l = kFile + "dma_sync_single_for_cpu: 0000:02:00.0 dir=FROM_DEVICE dma_addr=ffd1c840 size=1536\n";
  for (int i = 0; i < 200000; ++i) text += l;
  write_text(d / "in.txt", text);
  std::vector<uint64_t> calls;
  const ImportStats st = import_ftrace((d / "in.txt").string(), (d / "out.trace").string(), {},
                                       [&](uint64_t lines) { calls.push_back(lines); });
  EXPECT_EQ(st.records, 200000u);
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[0], 65536u);
}

}  // namespace
}  // namespace smmu_vp::dmatrace
