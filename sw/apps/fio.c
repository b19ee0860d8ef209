/*
 * fio: block I/O on the platform's NVMe drives, as fio with the libaio or
 * io_uring engine and O_DIRECT drives them. Each core of the app is one job;
 * job r uses drive nvme<r % drives> through its own I/O queue pair, keeps
 * `iodepth` requests in flight, each of `bs` bytes in physically scattered
 * 4 KiB pages (a user buffer), mapped with dma_map_sg per request and
 * unmapped at completion through the drive's own DMA domain (strict, lazy or
 * bypass). Completions come by interrupt or, with io_poll, by polling.
 *
 * rw: 0 read, 1 write, 2 randread, 3 randwrite, 4 randrw (rwmixread % reads).
 * Reports (sw.fio.*) what fio reports over the window after the warm-up:
 * iops, mbps (MB/s, 10^6 bytes), completion latency (clat_ns: submission to
 * completion seen by the job), CPU utilisation and busy cores, errors; and the
 * IOMMU's work. `verify` 1 writes a pattern to every block first and checks
 * what each read returns (host time only; a mismatch makes the app return 2).
 *
 * irq_cores N > 0: the app's last N cores run no job. They take the I/O
 * queues' interrupts and run the completions (unmap, callback), as a virtio
 * disk's completion interrupt does on another vCPU of a VM (Linux
 * drivers/block/virtio_blk.c: virtblk_done -> blk_mq_complete_request ->
 * virtblk_request_done -> virtblk_unmap_data, completed on the interrupted
 * CPU when it shares a cache with the submitter: block/blk-mq.c,
 * blk_mq_complete_need_ipi). A job maps (submits) on its own core and
 * sleeps until a completion core has freed one of its requests, as fio's
 * job waits in io_getevents. Job r's queue interrupts go to completion core
 * r % N. The queue's command identifiers pass between the two cores as
 * plain memory: the tag traffic of Linux's blk-mq is not charged.
 */
#include "apps/app_instance.h"
#include "apps/app_window.h"
#include "apps/iommu_setup.h"
#include "drivers/nvme/nvme.h"
#include "hal/hal.h"
#include "lib/compiler.h"
#include "lib/string.h"

#define FIO_MAX_DRIVES 8u
#define FIO_MAX_DEPTH 1024u

enum fio_rw { RW_READ = 0, RW_WRITE = 1, RW_RANDREAD = 2, RW_RANDWRITE = 3, RW_RANDRW = 4 };

struct fio_job;

struct fio_io {
  struct nvme_request rq;
  struct iommu_sg *sg;
  struct fio_job *job;
  bool busy;
};

struct fio_job {
  unsigned rank, drive;
  struct nvme_ctrl *ctrl;
  struct nvme_queue *q;
  struct fio_io *ios;
  unsigned depth, pages;
  uint64_t region_lba, region_blocks, next_lba; /* this job's LBAs */
  uint64_t window_start_ns, window_end_ns, idle_ns;
  uint64_t last_complete_ns; /* of this job's requests, for the window's credit */
  uint64_t ios_done, bytes_done, errors, verify_errors;
  bool verify;
  uint64_t io_cycles, completion_cycles;
};

static SW_CACHELINE_ALIGNED struct nvme_ctrl ctrls[FIO_MAX_DRIVES];
static SW_CACHELINE_ALIGNED struct app_dma dmas[FIO_MAX_DRIVES];
static SW_CACHELINE_ALIGNED struct swiotlb_mem bounce_pools[FIO_MAX_DRIVES];
/* The jobs' totals on one cache line, their rendezvous on the next. */
static SW_CACHELINE_ALIGNED struct {
  volatile uint64_t sum_ios, sum_bytes, sum_idle, sum_errors;
  SW_CACHELINE_ALIGNED volatile uint32_t setup_state; /* 0 pending, 1 ok, 2 failed */
  volatile uint32_t started, start_failed, reported;
  volatile uint64_t window_start, window_end;
} shared;

static unsigned drives(void) { return (unsigned)hal_param("drives"); }
static unsigned irq_cores(void) { return (unsigned)hal_param("irq_cores"); }
/* The app's first cores run the jobs, the rest (irq_cores) completions. */
static unsigned njobs(void) { return hal_app_cores() - irq_cores(); }

/* Queues drive d serves: one per job that uses it. */
static unsigned jobs_on(unsigned d) {
  unsigned n = 0;
  for (unsigned r = 0; r < njobs(); r++) n += r % drives() == d;
  return n;
}

static bool params_valid(void) {
  const uint64_t bs = hal_param("bs"), depth = hal_param("iodepth");
  if (bs < 4096 || bs % 4096 || bs / 4096 > NVME_MAX_REQUEST_PAGES || depth == 0 || depth >= FIO_MAX_DEPTH ||
      drives() == 0 || hal_param("runtime_us") == 0) {
    hal_log(HAL_LOG_ERROR, "fio: bs must be a multiple of 4096 up to %u KiB, iodepth 1..%u, drives 1..%u, runtime_us > 0",
            NVME_MAX_REQUEST_PAGES * 4, FIO_MAX_DEPTH - 1, FIO_MAX_DRIVES);
    return false;
  }
  if (irq_cores() >= hal_app_cores()) {
    hal_log(HAL_LOG_ERROR, "fio: irq_cores %u leaves none of the app's %u cores for jobs", irq_cores(), hal_app_cores());
    return false;
  }
  if (hal_param("jobs") && hal_param("jobs") * drives() != njobs()) {
    hal_log(HAL_LOG_ERROR, "fio: jobs = %llu per drive on %u drive(s) needs %llu job cores; the app has %u",
            (unsigned long long)hal_param("jobs"), drives(), (unsigned long long)(hal_param("jobs") * drives()),
            njobs());
    return false;
  }
  if (njobs() < drives()) {
    hal_log(HAL_LOG_ERROR, "fio: %u drives need at least as many job cores (one job each); the app has %u", drives(),
            njobs());
    return false;
  }
  return true;
}

/* Rank 0: every drive attached, brought up, its queues created. */
static int setup_drives(void) {
  if (!params_valid()) return -1;
  for (unsigned d = 0; d < drives(); d++) {
    char name[8] = "nvme0";
    name[4] = (char)('0' + d);
    struct hal_device_info info;
    if (hal_device_find(name, &info) != 0) {
      hal_log(HAL_LOG_ERROR, "fio: the platform has no device %s (drives = %u)", name, drives());
      return -1;
    }
    /* The bounce pool is filled after the attach, which only records it. */
    struct swiotlb_mem *bounce = hal_param("bounce") ? &bounce_pools[d] : NULL;
    /* domain 1: drive 0's domain takes every other drive too. */
    const int err = hal_param("domain") == 1 && d > 0
                        ? iommu_setup_attach_shared(&dmas[d], "fio", &dmas[0], &info, bounce)
                        : iommu_setup_attach_device(&dmas[d], "fio", &info, (uint16_t)(d + 1), bounce);
    if (err != 0) return -1;
    if (bounce) {
      /* seed 004's swiotlb=512,4,force: 512 slots of 2 KiB in 4 areas, more
       * pools as it fills (the seed's kernel allocated several). */
      struct swiotlb_config cfg;
      sw_memset(&cfg, 0, sizeof cfg);
      cfg.pool_size = 512 * 2048;
      cfg.nareas = 4;
      cfg.dynamic = true;
      cfg.force = true; /* every data page bounces, aligned or not */
      cfg.search = (enum swiotlb_search)hal_param("swiotlb_search");
      cfg.queued_locks = hal_param("spinlock") != 0;
      if (swiotlb_init(bounce, &cfg) != 0) {
        hal_log(HAL_LOG_ERROR, "fio: cannot set up the bounce pool of %s", name);
        return -1;
      }
    }
    if (nvme_probe(&ctrls[d], name, app_dma_dev(&dmas[d]), jobs_on(d), (unsigned)hal_param("iodepth") + 1,
                   hal_param("io_poll") != 0) != 0)
      return -1;
    hal_log(HAL_LOG_INFO, "fio: %s \"%s\", %llu blocks of %u bytes, %u I/O queue(s)%s", name, ctrls[d].model,
            (unsigned long long)ctrls[d].nsze, ctrls[d].lba_bytes, ctrls[d].nr_io,
            dmas[d].translated ? "" : ", physical addresses");
  }
  return 0;
}

static uint64_t pick_lba(struct fio_job *j, bool random) {
  const uint64_t step = (uint64_t)j->pages * 4096 / j->ctrl->lba_bytes;
  const uint64_t slots = j->region_blocks / step;
  uint64_t slot;
  if (random) {
    slot = hal_random() % slots;
  } else {
    slot = j->next_lba;
    j->next_lba = (j->next_lba + 1) % slots;
  }
  return j->region_lba + slot * step;
}

static uint8_t pattern(uint64_t lba, uint32_t i) { return (uint8_t)(lba * 7 + i * 13 + (i >> 9)); }

static void io_done(struct nvme_request *rq) {
  struct fio_io *io = (struct fio_io *)rq->ctx;
  struct fio_job *j = io->job;
  /* The completion half of fio's engine and the block layer, on the core
   * that runs the completion. */
  if (j->completion_cycles) hal_cycles(j->completion_cycles);
  io->busy = false;
  if (rq->status) {
    j->errors++;
    hal_stat_add("errors", 1);
    return;
  }
  if (j->verify && rq->opcode == NVME_CMD_READ) {
    for (unsigned p = 0; p < j->pages; p++) {
      const uint8_t *b = (const uint8_t *)hal_phys_to_virt(io->sg[p].pa);
      const uint64_t lba = rq->slba + (uint64_t)p * 4096 / j->ctrl->lba_bytes;
      for (uint32_t i = 0; i < 4096; i++)
        if (b[i] != pattern(lba, i)) {
          j->verify_errors++;
          hal_stat_add("verify_errors", 1);
          p = j->pages;
          break;
        }
    }
  }
  /* Throughput credits each request over the time since the job's previous
   * completion (app_window.h), so the window never takes credit for work
   * done before it; latency samples the requests completed in it, as fio
   * does. */
  const uint64_t bytes = (uint64_t)j->pages * 4096;
  const uint64_t ws = j->window_start_ns, we = j->window_end_ns, mid = ws + (we - ws) / 2;
  const uint64_t from = rq->submit_ns > j->last_complete_ns ? rq->submit_ns : j->last_complete_ns;
  const uint64_t first = app_window_share(bytes, from, rq->complete_ns, ws, mid);
  const uint64_t second = app_window_share(bytes, from, rq->complete_ns, mid, we);
  if (rq->complete_ns > j->last_complete_ns) j->last_complete_ns = rq->complete_ns;
  j->bytes_done += first + second;
  /* The window's two halves, for the steady-state check (invariants.h). */
  if (first) hal_stat_add("window_bytes_first_half", first);
  if (second) hal_stat_add("window_bytes_second_half", second);
  if (rq->complete_ns >= ws && rq->complete_ns < we) {
    j->ios_done++;
    hal_stat_sample("clat_ns", rq->complete_ns - rq->submit_ns);
  }
}

/* Fills the request: opcode and LBA as rw says; a write carries the pattern. */
static void prepare(struct fio_job *j, struct fio_io *io, unsigned rw, bool preload) {
  bool read;
  if (preload) read = false;
  else if (rw == RW_RANDRW) read = hal_random() % 100 < hal_param("rwmixread");
  else read = rw == RW_READ || rw == RW_RANDREAD;
  const bool random = !preload && rw >= RW_RANDREAD;
  io->rq.opcode = read ? NVME_CMD_READ : NVME_CMD_WRITE;
  io->rq.slba = pick_lba(j, random);
  io->rq.blocks = j->pages * 4096 / j->ctrl->lba_bytes;
  if (!read && j->verify)
    for (unsigned p = 0; p < j->pages; p++) {
      uint8_t *b = (uint8_t *)hal_phys_to_virt(io->sg[p].pa);
      const uint64_t lba = io->rq.slba + (uint64_t)p * 4096 / j->ctrl->lba_bytes;
      for (uint32_t i = 0; i < 4096; i++) b[i] = pattern(lba, i);
    }
}

static int job_init(struct fio_job *j) {
  sw_memset(j, 0, sizeof *j);
  j->rank = hal_app_rank();
  j->drive = j->rank % drives();
  j->ctrl = &ctrls[j->drive];
  j->q = &j->ctrl->io[j->rank / drives()];
  j->depth = (unsigned)hal_param("iodepth");
  j->pages = (unsigned)(hal_param("bs") / 4096);
  j->verify = hal_param("verify") != 0;
  j->completion_cycles = SW_MIN(hal_param("completion_cycles"), hal_param("io_cycles"));
  j->io_cycles = hal_param("io_cycles") - j->completion_cycles;
  /* Each job its own region of the namespace, so that verify holds. */
  const uint64_t jobs = jobs_on(j->drive);
  j->region_blocks = j->ctrl->nsze / jobs;
  j->region_lba = (j->rank / drives()) * j->region_blocks;
  const uint64_t region_cap = hal_param("region_mib") * 1024 * 1024 / j->ctrl->lba_bytes;
  if (region_cap && j->region_blocks > region_cap) j->region_blocks = region_cap;
  phys_addr_t pa;
  j->ios = (struct fio_io *)hal_dma_alloc(sizeof(struct fio_io) * j->depth, 64, &pa);
  struct iommu_sg *sgs = (struct iommu_sg *)hal_dma_alloc(sizeof(struct iommu_sg) * j->pages * j->depth, 64, &pa);
  /* A user buffer: every other page of a block, so nothing is physically
   * contiguous. */
  phys_addr_t pages_pa;
  if (!j->ios || !sgs || !hal_dma_alloc((size_t)2 * j->pages * j->depth * 4096, 4096, &pages_pa)) {
    hal_log(HAL_LOG_ERROR, "fio: out of DMA memory for %u x %u-page buffers", j->depth, j->pages);
    return -1;
  }
  if (j->region_blocks < (uint64_t)j->pages * 4096 / j->ctrl->lba_bytes) {
    hal_log(HAL_LOG_ERROR, "fio: the drive's region is smaller than one block size");
    return -1;
  }
  for (unsigned i = 0; i < j->depth; i++) {
    struct fio_io *io = &j->ios[i];
    io->job = j;
    io->sg = sgs + (size_t)i * j->pages;
    for (unsigned p = 0; p < j->pages; p++) {
      io->sg[p].pa = pages_pa + ((uint64_t)(i * j->pages + p) * 2) * 4096;
      io->sg[p].len = 4096;
    }
    io->rq.sg = io->sg;
    io->rq.nents = j->pages;
    io->rq.done = io_done;
    io->rq.ctx = io;
  }
  return 0;
}

/* Keeps the queue full; returns false on a submission error. */
static bool top_up(struct fio_job *j, unsigned rw, bool preload) {
  for (unsigned i = 0; i < j->depth; i++) {
    struct fio_io *io = &j->ios[i];
    if (io->busy) continue;
    prepare(j, io, rw, preload);
    hal_cycles(j->io_cycles);
    const int rc = nvme_submit(j->q, &io->rq);
    if (rc == -1) return true; /* full: completions first */
    if (rc != 0) return false;
    io->busy = true;
  }
  return true;
}

static unsigned inflight(const struct fio_job *j);

static void wait_completions(struct fio_job *j, bool poll) {
  if (irq_cores()) {
    /* A completion core frees our requests and wakes us (its SEV after
     * freeing one leaves our event register set, so none is missed). */
    if (inflight(j)) j->idle_ns += app_wfe_in_window(j->window_start_ns, j->window_end_ns);
    return;
  }
  if (poll) {
    if (!nvme_process_cq(j->q)) hal_cpu_relax();
    return;
  }
  if (!hal_load32(&j->q->irq_pending)) j->idle_ns += app_wfe_in_window(j->window_start_ns, j->window_end_ns);
  hal_store32(&j->q->irq_pending, 0);
  nvme_process_cq(j->q);
}

static unsigned inflight(const struct fio_job *j) {
  unsigned n = 0;
  for (unsigned i = 0; i < j->depth; i++) n += j->ios[i].busy;
  return n;
}

/* verify: write every block of the region once before the measured run. */
static bool preload(struct fio_job *j, bool poll) {
  const uint64_t step = (uint64_t)j->pages * 4096 / j->ctrl->lba_bytes;
  const uint64_t total = j->region_blocks / step;
  uint64_t issued = 0;
  j->window_start_ns = j->window_end_ns = 0;
  while (issued < total || inflight(j)) {
    for (unsigned i = 0; i < j->depth && issued < total; i++) {
      struct fio_io *io = &j->ios[i];
      if (io->busy) continue;
      prepare(j, io, RW_WRITE, true);
      if (nvme_submit(j->q, &io->rq) != 0) break;
      io->busy = true;
      issued++;
    }
    wait_completions(j, poll);
  }
  j->next_lba = 0;
  return j->errors == 0;
}

/* The swiotlb pools' work over the whole run (warm-up included), summed
 * over the drives. */
static void report_bounce(void) {
  struct swiotlb_stats t;
  sw_memset(&t, 0, sizeof t);
  uint64_t pools = 0, handoffs = 0;
  for (unsigned d = 0; d < drives(); d++) {
    const struct swiotlb_stats *b = &bounce_pools[d].stats;
    t.maps += b->maps;
    t.slots_scanned += b->slots_scanned;
    t.areas_tried += b->areas_tried;
    handoffs += swiotlb_area_lock_handoffs(&bounce_pools[d]);
    t.transient_pools += b->transient_pools;
    t.used_hiwater += b->used_hiwater;
    pools += bounce_pools[d].npools;
  }
  hal_stat_set("swiotlb_maps", (double)t.maps);
  hal_stat_set("swiotlb_pools", (double)pools);
  hal_stat_set("swiotlb_transient_pools", (double)t.transient_pools);
  hal_stat_set("swiotlb_used_hiwater_slots", (double)t.used_hiwater);
  if (!t.maps) return;
  hal_stat_set("swiotlb_slots_per_map", (double)t.slots_scanned / (double)t.maps);
  hal_stat_set("swiotlb_areas_per_map", (double)t.areas_tried / (double)t.maps);
  hal_stat_set("swiotlb_lock_handoffs_per_map", (double)handoffs / (double)t.maps);
}

/* Every core of the app adds its counts (a completion core only its idle
 * time); the last one reports. */
static void report(const struct fio_job *j, uint64_t idle_ns) {
  if (j) {
    hal_fetch_add64(&shared.sum_ios, j->ios_done);
    hal_fetch_add64(&shared.sum_bytes, j->bytes_done);
    hal_fetch_add64(&shared.sum_errors, j->errors);
  }
  hal_fetch_add64(&shared.sum_idle, idle_ns);
  if (hal_fetch_add32(&shared.reported, 1) + 1 != hal_app_cores()) return;
  const uint64_t window = shared.window_end - shared.window_start;
  const double seconds = (double)window / 1e9;
  const double busy = app_busy_cores(hal_app_cores(), window, shared.sum_idle);
  /* Requests all have bs bytes: IOPS follows from the bytes' shares. */
  const double iops = (double)shared.sum_bytes / (double)hal_param("bs") / seconds;
  hal_stat_set("iops", iops);
  hal_stat_set("ios_completed", (double)shared.sum_ios);
  hal_stat_set("mbps", (double)shared.sum_bytes / seconds / 1e6);
  hal_stat_set("busy_cores", busy);
  hal_stat_set("cpu_utilisation", busy / hal_app_cores());
  uint64_t elided = 0, syncs = 0, iovas = 0;
  for (unsigned d = 0; d < drives(); d++) iovas += dmas[d].cookie.stats.iovas_allocated;
  if (dmas[0].translated) {
    iommu_setup_report(&dmas[0]); /* the SMMUs' totals, drive 0's domain */
    uint64_t commands;
    iommu_setup_smmu_totals(&commands, &syncs, &elided);
    if (syncs + elided) hal_stat_set("syncs_elided_share", (double)elided / (double)(syncs + elided));
    hal_stat_set("iovas_allocated", (double)iovas);
  }
  if (hal_param("bounce")) report_bounce();
  hal_log(HAL_LOG_INFO, "fio: %.0f IOPS, %.1f MB/s over %.3f ms, %u job(s) on %u drive(s), bs %llu, iodepth %llu; "
          "CPU %.1f%% (%.2f busy cores); %llu errors",
          iops, (double)shared.sum_bytes / seconds / 1e6, (double)window / 1e6, njobs(), drives(),
          (unsigned long long)hal_param("bs"), (unsigned long long)hal_param("iodepth"), 100.0 * busy / hal_app_cores(),
          busy, (unsigned long long)shared.sum_errors);
}

/* Completion core k: the interrupts of the queues of jobs r with
 * r % irq_cores == k, each one's completions run here; until every job has
 * drained. */
static int completion_main(unsigned k) {
  struct nvme_queue *qs[NVME_MAX_IO_QUEUES * FIO_MAX_DRIVES];
  unsigned nq = 0;
  int rc = 0;
  for (unsigned r = k; r < njobs() && rc == 0; r += irq_cores()) {
    struct nvme_ctrl *c = &ctrls[r % drives()];
    if (nvme_queue_start(c, r / drives()) != 0) rc = 1;
    else qs[nq++] = &c->io[r / drives()];
  }
  if (rc) hal_fetch_add32(&shared.start_failed, 1);
  hal_fetch_add32(&shared.started, 1);
  hal_sev();
  while (hal_load32(&shared.started) < hal_app_cores()) hal_wfe();
  if (hal_load32(&shared.start_failed)) return 1;
  /* From the start: the jobs' verify preload completes here too. The window
   * is set later by job 0; sleep before it counts for nothing. */
  uint64_t idle = 0;
  for (;;) {
    unsigned done = 0;
    for (unsigned i = 0; i < nq; i++) {
      if (!hal_load32(&qs[i]->irq_pending)) continue;
      hal_store32(&qs[i]->irq_pending, 0);
      done += nvme_process_cq(qs[i]);
    }
    if (done) {
      hal_sev(); /* the jobs whose requests completed */
      continue;
    }
    /* Every job reports once it has drained its queue. */
    if (hal_load32(&shared.reported) >= njobs()) break;
    const uint64_t ws = shared.window_start; /* job 0 stores the end first */
    if (ws)
      idle += app_wfe_in_window(ws, shared.window_end);
    else
      hal_wfe();
  }
  report(NULL, idle);
  return 0;
}

static int fio_main(void) {
  if (!app_single_instance("fio")) return 1;
  struct fio_job job;
  if (hal_app_rank() == 0) {
    hal_store32(&shared.setup_state, setup_drives() == 0 ? 1 : 2);
    hal_sev();
  }
  uint32_t st;
  while ((st = hal_load32(&shared.setup_state)) == 0) hal_wfe();
  if (st == 2) return 1;
  if (hal_app_rank() >= njobs()) return completion_main(hal_app_rank() - njobs());
  const bool poll = hal_param("io_poll") != 0;
  const int rc = job_init(&job) == 0 && (irq_cores() || nvme_queue_start(job.ctrl, job.rank / drives()) == 0) ? 0 : 1;
  if (rc) hal_fetch_add32(&shared.start_failed, 1);
  hal_fetch_add32(&shared.started, 1);
  hal_sev();
  while (hal_load32(&shared.started) < hal_app_cores()) hal_wfe();
  if (hal_load32(&shared.start_failed)) return 1;
  if (job.verify && !preload(&job, poll)) {
    hal_log(HAL_LOG_ERROR, "fio: job %u: writing the verify pattern failed", job.rank);
    return 1;
  }
  if (job.rank == 0) {
    uint64_t start, end;
    app_window_open("fio", hal_param("warmup_us") * 1000, hal_param("runtime_us") * 1000, &start, &end);
    hal_store64(&shared.window_end, end);
    hal_store64(&shared.window_start, start);
    hal_sev();
  }
  while (!hal_load64(&shared.window_start)) hal_wfe();
  job.window_start_ns = shared.window_start;
  job.window_end_ns = shared.window_end;
  const unsigned rw = (unsigned)hal_param("rw");
  while (hal_now_ns() < job.window_end_ns) {
    if (!top_up(&job, rw, false)) {
      hal_log(HAL_LOG_ERROR, "fio: job %u: a request could not be mapped", job.rank);
      return 1;
    }
    wait_completions(&job, poll);
  }
  /* Drain what is in flight, so that every unmap happens. */
  while (inflight(&job)) wait_completions(&job, poll);
  report(&job, job.idle_ns);
  if (irq_cores()) hal_sev(); /* the completion cores wait for every job's report */
  return job.verify_errors ? 2 : 0;
}

static const struct hal_param_decl fio_params[] = {
    IOMMU_SETUP_PARAMS,
    {"rw", 2, "0 read, 1 write, 2 randread, 3 randwrite, 4 randrw (sequential ones step through the job's region).", 4, "read,write,randread,randwrite,randrw"},
    {"rwmixread", 50, "randrw: percentage of reads.", 100, 0},
    {"bs", 4096, "Block size in bytes, a multiple of 4096 (at most 4 MiB).", 0, 0},
    {"iodepth", 32, "Requests each job keeps in flight.", 0, 0},
    {"drives", 1, "Drives used: nvme0 .. nvme<drives-1>; job r (the app's r-th core) uses drive r % drives.", 8, 0},
    {"jobs", 0, "Jobs per drive; each job is one of the app's cores, so cores = jobs x drives (0: cores / drives).", 0, 0},
    {"runtime_us", 2000, "Measured time after the warm-up, us.", 0, 0},
    {"warmup_us", 1000, "I/O before the measured window, us.", 0, 0},
    {"io_poll", 0, "1: completions by polling the CQ (Linux io_poll), no interrupts.", 1, 0},
    {"verify", 0, "1: write a pattern over each job's region first, then check every read against it.", 1, 0},
    {"region_mib", 1024, "LBA span of each job in MiB (0: the job's share of the namespace).", 0, 0},
    {"bounce", 0, "1: bounce every data page through swiotlb (swiotlb=512,4,force: pools of 512 slots in 4 areas, more as they fill) on top of the drive's strict DMA domain.", 1, 0},
    {"domain", 0, "0: each drive in a DMA domain of its own; 1: every drive in drive 0's (one IOVA space and ASID, as devices in one VFIO container), whose invalidations go to every SMMU a drive sits behind (the fanout parameter).", 1, "per_drive,shared"},
    {"swiotlb_search", 0, "Bounce slot search: 0 pool-first (before seed 004), 1 area-first.", 1, "pool_first,area_first"},
    {"irq_cores", 0, "0: each job completes its own I/O (its queue's interrupt comes to its core). N: the app's last N cores run no job but take the queues' interrupts and run the completions, unmaps included, as a virtio disk's interrupt does on another vCPU (Linux virtio_blk.c virtblk_done -> blk_mq_complete_request -> virtblk_unmap_data; blk-mq.c blk_mq_complete_need_ipi completes where the interrupt arrived); jobs = cores - N.", 0, 0},
    {"completion_cycles", 0, "Of io_cycles, those of an I/O's completion (the block layer's end of request, the aio event, waking the job), charged on the core that runs the completion (with irq_cores, a completion core); the rest at submission. 0: all at submission.", 0, 0},
    {"io_cycles", 4000, "CPU cycles per I/O outside the driver and the DMA API: fio's engine and the block layer, submission and completion together (an estimate: 2 us at 2 GHz).", 0, 0},
    {0, 0, 0, 0, 0},
};

const struct hal_app app_fio = {"fio",
                                "fio-style block I/O on the NVMe drives: jobs, iodepth, block size, read/write mix, "
                                "through the DMA API (strict, lazy, passthrough or bounced).",
                                fio_main, fio_params};
