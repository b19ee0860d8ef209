/*
 * Cores and apps on the qemu-virt port. The other cores are powered off
 * between jobs: qv_run_app starts each core of the job with PSCI CPU_ON
 * (DEN0022 5.6), the core runs the app, reports and turns itself off with
 * CPU_OFF. An idle core therefore costs the host nothing (QEMU's WFE does
 * not sleep, so a core waiting in WFE would spin a host thread, slowing
 * core 0 on a loaded machine). hal_param answers from the running app's
 * declarations (hal_app.params), overridden by the values the check
 * program passes.
 */
#include "qv_port.h"

#include "lib/string.h"

#define PSCI_CPU_OFF 0x84000002ull
#define PSCI_CPU_ON_64 0xC4000003ull
#define PSCI_AFFINITY_INFO_64 0xC4000004ull
#define PSCI_SUCCESS 0
#define PSCI_AFFINITY_OFF 1

struct mailbox {
  volatile uint32_t seq;      /* bumped by core 0 for each job */
  volatile uint32_t done_seq; /* = seq once the core has finished it */
  volatile int32_t ret;
  volatile uint32_t online;
};
static struct mailbox mbox[QV_MAX_CPUS];
static unsigned cpus_online = 1;

/* The app running now (one at a time) and its setting. */
static const struct hal_app *cur_app;
static const struct qv_param *cur_overrides;
static unsigned cur_n_overrides;
static uint32_t cur_mask = 1;

unsigned qv_cpus_online(void) { return cpus_online; }

static const struct hal_param_decl *find_decl(const struct hal_app *app, const char *name) {
  for (const struct hal_param_decl *d = app->params; d && d->name; d++)
    if (sw_strcmp(d->name, name) == 0) return d;
  return NULL;
}

uint64_t hal_param(const char *name) {
  if (!cur_app) qv_fatal("hal_param(\"%s\") outside an app", name);
  const struct hal_param_decl *d = find_decl(cur_app, name);
  if (!d) qv_fatal("app %s asked for parameter \"%s\", which it does not declare", cur_app->name, name);
  for (unsigned i = 0; i < cur_n_overrides; i++)
    if (sw_strcmp(cur_overrides[i].name, name) == 0) return cur_overrides[i].value;
  return d->default_value;
}

unsigned hal_app_cores(void) { return (unsigned)__builtin_popcount(cur_mask); }

/* One app per run on this port. */
unsigned hal_app_instance(void) { return 0; }

unsigned hal_app_rank(void) {
  const unsigned cpu = hal_cpu_id();
  return (unsigned)__builtin_popcount(cur_mask & ((1u << cpu) - 1));
}

/* Powers core `c` on at qv_secondary_entry once its last CPU_OFF has taken
 * effect (CPU_ON of a core still on fails with ALREADY_ON). */
static int64_t power_on(unsigned c) {
  const uint64_t give_up = hal_now_ns() + 1000000000ull;
  int64_t st;
  while ((st = (int64_t)qv_hvc(PSCI_AFFINITY_INFO_64, c, 0, 0)) != PSCI_AFFINITY_OFF) {
    if (st < 0) return st; /* INVALID_PARAMETERS: no such core */
    if (hal_now_ns() > give_up) qv_fatal("core %u never turned off", c);
    hal_cpu_relax();
  }
  hal_barrier(HAL_BARRIER_DSB); /* the job is visible before the core starts */
  return (int64_t)qv_hvc(PSCI_CPU_ON_64, c, (uint64_t)(uintptr_t)qv_secondary_entry, c);
}

int qv_run_app(const struct hal_app *app, uint32_t core_mask, const struct qv_param *overrides, unsigned n_overrides) {
  core_mask |= 1u;
  core_mask &= (cpus_online >= 32 ? ~0u : (1u << cpus_online) - 1);
  for (unsigned i = 0; i < n_overrides; i++) {
    const struct hal_param_decl *d = find_decl(app, overrides[i].name);
    if (!d) qv_fatal("app %s has no parameter \"%s\"", app->name, overrides[i].name);
    if (d->max && overrides[i].value > d->max)
      qv_fatal("app %s: %s = %llu is above its maximum %llu", app->name, d->name,
               (unsigned long long)overrides[i].value, (unsigned long long)d->max);
  }
  cur_app = app;
  cur_overrides = overrides;
  cur_n_overrides = n_overrides;
  cur_mask = core_mask;
  qv_stats_reset();
  for (unsigned c = 1; c < cpus_online; c++) {
    if (!(core_mask & (1u << c))) continue;
    hal_fetch_add32(&mbox[c].seq, 1);
    if (power_on(c) != PSCI_SUCCESS) qv_fatal("PSCI CPU_ON of core %u failed", c);
  }
  int ret = app->main();
  for (unsigned c = 1; c < cpus_online; c++) {
    if (!(core_mask & (1u << c))) continue;
    while (hal_load32(&mbox[c].done_seq) != hal_load32(&mbox[c].seq)) hal_cpu_relax();
    if (ret == 0) ret = mbox[c].ret;
  }
  cur_app = NULL;
  return ret;
}

/* Entered after every CPU_ON: runs the pending job if there is one, then
 * turns the core off. */
void qv_secondary_main(unsigned cpu) {
  qv_hal_init_cpu(cpu);
  struct mailbox *m = &mbox[cpu];
  hal_store32(&m->online, 1);
  const uint32_t job = hal_load32(&m->seq);
  if (job != hal_load32(&m->done_seq)) {
    m->ret = cur_app->main();
    hal_store32(&m->done_seq, job);
  }
  qv_hvc(PSCI_CPU_OFF, 0, 0, 0);
  qv_fatal("core %u: PSCI CPU_OFF returned", cpu);
}

/* Counts the cores PSCI will start (virt's MPIDRs are 0..n-1 in Aff0 for up
 * to 8 cores): each comes up once, says so and turns off again. */
static unsigned count_cpus(void) {
  unsigned n = 1;
  for (unsigned c = 1; c < QV_MAX_CPUS; c++) {
    if (power_on(c) != PSCI_SUCCESS) break; /* INVALID_PARAMETERS: no such core */
    const uint64_t give_up = hal_now_ns() + 1000000000ull;
    while (!hal_load32(&mbox[c].online)) {
      if (hal_now_ns() > give_up) qv_fatal("core %u did not come up after PSCI CPU_ON", c);
      hal_cpu_relax();
    }
    n++;
  }
  return n;
}

void qv_primary_main(void) {
  qv_hal_init_cpu(0);
  qv_dma_region_init();
  cpus_online = count_cpus();
  qv_platform_init();
  const int failed = qv_crosscheck_main();
  qv_poweroff(failed ? 1 : 0);
}
