/*
 * What the files of the qemu-virt HAL port share. sw/ code sees only
 * hal/hal.h; the check program (qv_crosscheck.c) also uses the runner,
 * stats and result functions declared here.
 */
#ifndef SMMU_VP_QV_PORT_H
#define SMMU_VP_QV_PORT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hal/hal.h"
#include "qv_layout.h"

/* Saved registers of an exception (start.S's layout). */
struct qv_frame {
  uint64_t x[31];
  uint64_t elr, spsr, pad;
};
_Static_assert(sizeof(struct qv_frame) == QV_FRAME_SIZE, "start.S and struct qv_frame disagree");

/* ---- start.S */
uint64_t qv_semihost(uint64_t op, uint64_t arg);
uint64_t qv_hvc(uint64_t fid, uint64_t a1, uint64_t a2, uint64_t a3);
void qv_secondary_entry(void);
void qv_primary_main(void);
void qv_secondary_main(unsigned cpu);
void qv_exception(struct qv_frame *f, uint64_t kind);

/* ---- Console and formatting (qv_console.c). */
int qv_vsnprintf(char *buf, size_t size, const char *fmt, va_list ap);
int qv_snprintf(char *buf, size_t size, const char *fmt, ...) HAL_PRINTF(3, 4);
/* One line on the UART, atomically with respect to other cores. */
void qv_printf(const char *fmt, ...) HAL_PRINTF(1, 2);
/* Prints the message, then powers off with a failing status. */
_Noreturn void qv_fatal(const char *fmt, ...) HAL_PRINTF(1, 2);
/* SYS_EXIT through semihosting (QEMU's exit status), else PSCI SYSTEM_OFF. */
_Noreturn void qv_poweroff(int status);

/* ---- Platform (qv_platform.c). */
/* Enumerates PCI bus 0, assigns BARs and fills the device table. */
void qv_platform_init(void);
unsigned qv_cpu_count_set(unsigned n);
/* Core bookkeeping of the HAL (qv_hal.c). */
void qv_hal_init_cpu(unsigned cpu);
void qv_dma_region_init(void);
uint64_t qv_dma_bytes_used(void);

/* ---- Apps (qv_runner.c): runs `app` on the cores of `core_mask` (bit n =
 * core n; core 0 always included), with parameter values overriding the
 * app's defaults. Returns core 0's return value, or the first non-zero one
 * of the others. */
struct qv_param {
  const char *name;
  uint64_t value;
};
int qv_run_app(const struct hal_app *app, uint32_t core_mask, const struct qv_param *overrides, unsigned n_overrides);
unsigned qv_cpus_online(void);

/* ---- Stats of the running app (qv_stats.c). */
void qv_stats_reset(void);
void qv_stats_print(const char *app);
/* The value of a counter (add), the count of a histogram (sample) or the
 * value set (set, truncated); false when the app never wrote `name`. */
bool qv_stat_value(const char *name, double *out);

/* ---- The profiles' micro-benchmarks (qv_micro.c), run by the check program. */
void qv_check_micro(void);

/* ---- The check program (qv_crosscheck.c): returns non-zero when a
 * check failed. */
int qv_crosscheck_main(void);
/* Set when the semihosting trap was undefined (QEMU without -semihosting). */
extern volatile uint32_t qv_semihosting_absent;

/* ---- Results of the check program. */
void qv_check(bool ok, const char *fmt, ...) HAL_PRINTF(2, 3);
unsigned qv_checks_failed(void);
unsigned qv_checks_total(void);

#endif
