/*
 * camera: capture frames as a V4L2 client does, on one core. `buffers` frame
 * buffers of physically scattered pages (every other page) are mapped with
 * dma_map_sg and queued; for each captured frame the core runs the consumer
 * (`consumer_kcycles` of CPU work standing for the ISP or encoder), then either
 * unmaps the buffer and maps it again before queueing it (`policy` 0: what
 * seed 000's camera did, a map and an unmap per frame) or queues it still
 * mapped (`policy` 1). A frame that finds no buffer queued is dropped by the
 * camera.
 *
 * Reports (sw.camera.*): frames captured, dropped and corrupted (from the
 * camera), frame latency (first line to the consumer taking it), map and
 * unmap latency per frame, the unmap rate in MB/s over the run. `check` 1
 * verifies each clean frame's first and last lines against the sensor's
 * pattern (host time only; a mismatch makes the app return 2).
 */
#include "apps/app_instance.h"
#include "apps/iommu_setup.h"
#include "drivers/camera/camera.h"
#include "hal/hal.h"
#include "lib/compiler.h"
#include "lib/string.h"

#define CAM_MAX_BUFFERS 16u

static SW_CACHELINE_ALIGNED struct cam_dev cam;
static SW_CACHELINE_ALIGNED struct app_dma cam_dma;
static struct cam_buffer bufs[CAM_MAX_BUFFERS];

static bool check_frame(const struct cam_buffer *b, uint32_t seq) {
  const uint32_t lines[2] = {0, cam.height - 1};
  for (unsigned k = 0; k < 2; k++) {
    const uint64_t off = (uint64_t)lines[k] * cam.line_bytes;
    for (uint32_t x = 0; x < cam.line_bytes; x++) {
      const uint64_t o = off + x;
      const uint8_t *p = (const uint8_t *)hal_phys_to_virt(b->sg[o / 4096].pa) + o % 4096;
      if (*p != cam_pattern_byte(seq, lines[k], x)) return false;
    }
  }
  return true;
}

static int setup_buffers(unsigned n) {
  const unsigned pages = (unsigned)((cam.frame_bytes + 4095) / 4096);
  phys_addr_t pa;
  struct iommu_sg *sg = (struct iommu_sg *)hal_dma_alloc(sizeof(struct iommu_sg) * pages * n, 64, &pa);
  uint64_t *addrs = (uint64_t *)hal_dma_alloc(sizeof(uint64_t) * pages * n, 64, &pa);
  /* Without an IOMMU the camera needs contiguous buffers (as CMA gives). */
  const bool scatter = app_dma_dev(&cam_dma) != NULL;
  phys_addr_t base;
  if (!sg || !addrs || !hal_dma_alloc((size_t)pages * n * 4096 * (scatter ? 2 : 1), 4096, &base)) {
    hal_log(HAL_LOG_ERROR, "camera: out of DMA memory for %u buffers of %u pages", n, pages);
    return -1;
  }
  for (unsigned i = 0; i < n; i++) {
    struct cam_buffer *b = &bufs[i];
    sw_memset(b, 0, sizeof *b);
    b->id = (uint16_t)i;
    b->sg = sg + (size_t)i * pages;
    b->dma_addrs = addrs + (size_t)i * pages;
    b->nents = pages;
    b->bytes = (uint64_t)pages * 4096;
    for (unsigned p = 0; p < pages; p++) {
      const uint64_t page = (uint64_t)i * pages + p;
      b->sg[p].pa = base + (scatter ? 2 * page : page) * 4096;
      b->sg[p].len = 4096;
    }
  }
  return 0;
}

static int camera_main(void) {
  if (!app_single_instance("camera")) return 1;
  if (hal_app_rank() != 0) return 0; /* one core drives the camera */
  const unsigned n = (unsigned)hal_param("buffers");
  const unsigned policy = (unsigned)hal_param("policy");
  if (n < 2 || hal_param("duration_us") == 0) {
    hal_log(HAL_LOG_ERROR, "camera: buffers must be at least 2 and duration_us positive");
    return 1;
  }
  struct hal_device_info info;
  if (hal_device_find("camera0", &info) != 0) {
    hal_log(HAL_LOG_ERROR, "camera: the platform has no device camera0");
    return 1;
  }
  if (iommu_setup_attach_device(&cam_dma, "camera", &info, 3, NULL) != 0 ||
      cam_probe(&cam, "camera0", app_dma_dev(&cam_dma)) != 0 || setup_buffers(n) != 0)
    return 1;
  if (n > cam.queue_depth) {
    hal_log(HAL_LOG_ERROR, "camera: %u buffers, the camera queues at most %u", n, cam.queue_depth);
    return 1;
  }
  for (unsigned i = 0; i < n; i++)
    if (cam_buffer_map(&cam, &bufs[i]) != 0 || cam_queue(&cam, &bufs[i]) != 0) return 1;
  const uint64_t consumer_cycles = hal_param("consumer_kcycles") * 1000;
  const bool check = hal_param("check") != 0;
  if (cam_start(&cam) != 0) return 1;
  const uint64_t t0 = hal_now_ns(), end = t0 + hal_param("duration_us") * 1000;
  uint64_t unmapped_bytes = 0, bad = 0;
  while (hal_now_ns() < end) {
    if (!hal_load32(&cam.irq_pending)) hal_wfe();
    hal_store32(&cam.irq_pending, 0);
    struct cam_frame f;
    while (cam_dequeue(&cam, &f)) {
      struct cam_buffer *b = &bufs[f.id < n ? f.id : 0];
      b->queued = false;
      hal_stat_sample("frame_latency_ns", hal_now_ns() - f.start_ns);
      if (!f.status && check && !check_frame(b, f.seq)) bad++;
      hal_cycles(consumer_cycles); /* the ISP or encoder */
      if (policy == 0) {
        uint64_t t = hal_now_ns();
        cam_buffer_unmap(&cam, b);
        hal_stat_sample("unmap_ns", hal_now_ns() - t);
        unmapped_bytes += b->bytes;
        t = hal_now_ns();
        if (cam_buffer_map(&cam, b) != 0) {
          hal_log(HAL_LOG_ERROR, "camera: buffer %u could not be mapped again", b->id);
          return 1;
        }
        hal_stat_sample("map_ns", hal_now_ns() - t);
      }
      if (cam_queue(&cam, b) != 0) return 1;
    }
  }
  cam_stop(&cam);
  const double seconds = (double)(hal_now_ns() - t0) / 1e9;
  const uint64_t captured = cam_read_stat(&cam, CAM_STAT_FRAMES_CAPTURED);
  const uint64_t dropped = cam_read_stat(&cam, CAM_STAT_FRAMES_DROPPED);
  const uint64_t corrupted = cam_read_stat(&cam, CAM_STAT_FRAMES_CORRUPTED);
  hal_stat_set("frames_captured", (double)captured);
  hal_stat_set("frames_dropped", (double)dropped);
  hal_stat_set("frames_corrupted", (double)corrupted);
  hal_stat_set("frames_lost", (double)(dropped + corrupted));
  hal_stat_set("unmap_mbps", (double)unmapped_bytes / seconds / 1e6);
  if (bad) hal_stat_set("frames_bad_pattern", (double)bad);
  iommu_setup_report(&cam_dma);
  hal_log(HAL_LOG_INFO, "camera: %llu frames captured, %llu dropped, %llu corrupted in %.1f ms; unmaps %.1f MB/s (%s)",
          (unsigned long long)captured, (unsigned long long)dropped, (unsigned long long)corrupted, seconds * 1e3,
          (double)unmapped_bytes / seconds / 1e6, policy ? "buffers kept mapped" : "map and unmap every frame");
  return bad ? 2 : 0;
}

static const struct hal_param_decl camera_params[] = {
    IOMMU_SETUP_PARAMS,
    {"buffers", 4, "Frame buffers in the queue (2..16, at most the camera's queue depth).", 16, 0},
    {"policy", 0, "0: unmap each captured buffer and map it again (seed 000's camera); 1: keep buffers mapped.", 1, "map_every_frame,kept_mapped"},
    {"consumer_kcycles", 10000, "Thousands of CPU cycles the consumer (ISP or encoder) spends on each frame (10000: 5 ms at 2 GHz).", 0, 0},
    {"duration_us", 200000, "Capture time, us of simulated time.", 0, 0},
    {"check", 1, "1: check each clean frame's first and last line against the sensor's pattern (host time only).", 1, 0},
    {0, 0, 0, 0, 0},
};

const struct hal_app app_camera = {"camera",
                                   "V4L2-style capture on camera0: scattered frame buffers mapped with dma_map_sg, "
                                   "a consumer per frame, map and unmap per frame or buffers kept mapped.",
                                   camera_main, camera_params};
