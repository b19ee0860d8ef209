/*
 * hal_stat_* on the qemu-virt port: the running app's counters, histograms
 * (count, mean, min, max) and values, shared by its cores, printed on the
 * UART when it ends (there is no stats.json here).
 */
#include "qv_port.h"

#include "lib/string.h"

#define MAX_STATS 96

enum kind { COUNTER, SAMPLES, VALUE };

struct stat {
  const char *name; /* the app's string: apps pass literals or static buffers */
  enum kind kind;
  uint64_t count, sum, min, max;
  double value;
};

static struct stat stats[MAX_STATS];
static unsigned n_stats;
static unsigned dropped;
static volatile uint32_t stats_lock;

static void lock(void) {
  while (hal_xchg32(&stats_lock, 1)) hal_cpu_relax();
}
static void unlock(void) { hal_store32(&stats_lock, 0); }

/* Called with the lock held. */
static struct stat *find(const char *name, enum kind kind) {
  for (unsigned i = 0; i < n_stats; i++)
    if (sw_strcmp(stats[i].name, name) == 0) return &stats[i];
  if (n_stats == MAX_STATS) {
    dropped++;
    return NULL;
  }
  struct stat *s = &stats[n_stats++];
  sw_memset(s, 0, sizeof *s);
  s->name = name;
  s->kind = kind;
  s->min = ~0ull;
  return s;
}

void hal_stat_add(const char *name, uint64_t delta) {
  lock();
  struct stat *s = find(name, COUNTER);
  if (s) s->count += delta;
  unlock();
}

void hal_stat_sample(const char *name, uint64_t value_ns) {
  lock();
  struct stat *s = find(name, SAMPLES);
  if (s) {
    s->count++;
    s->sum += value_ns;
    if (value_ns < s->min) s->min = value_ns;
    if (value_ns > s->max) s->max = value_ns;
  }
  unlock();
}

void hal_stat_set(const char *name, double value) {
  lock();
  struct stat *s = find(name, VALUE);
  if (s) s->value = value;
  unlock();
}

void qv_stats_reset(void) {
  lock();
  n_stats = 0;
  dropped = 0;
  unlock();
}

bool qv_stat_value(const char *name, double *out) {
  bool found = false;
  lock();
  for (unsigned i = 0; i < n_stats; i++) {
    if (sw_strcmp(stats[i].name, name) != 0) continue;
    *out = stats[i].kind == VALUE ? stats[i].value : (double)stats[i].count;
    found = true;
    break;
  }
  unlock();
  return found;
}

void qv_stats_print(const char *app) {
  lock();
  for (unsigned i = 0; i < n_stats; i++) {
    const struct stat *s = &stats[i];
    switch (s->kind) {
      case COUNTER: qv_printf("  stat %s.%s = %llu", app, s->name, (unsigned long long)s->count); break;
      case VALUE: qv_printf("  stat %s.%s = %.3f", app, s->name, s->value); break;
      case SAMPLES:
        qv_printf("  stat %s.%s: n %llu mean %llu min %llu max %llu", app, s->name, (unsigned long long)s->count,
                  (unsigned long long)(s->count ? s->sum / s->count : 0), (unsigned long long)(s->count ? s->min : 0),
                  (unsigned long long)s->max);
        break;
    }
  }
  if (dropped) qv_printf("  stat %s: %u names beyond the table's %u were not recorded", app, dropped, MAX_STATS);
  unlock();
}
