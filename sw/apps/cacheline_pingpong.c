/*
 * cacheline_pingpong: two cores hand one cache line back and forth with
 * compare-and-swap, as the public core-to-core latency matrices measure it
 * (one thread swaps the word from "ping" to "pong" when it sees ping, the
 * other back): `round_trips` round trips, reported as the one-way latency
 * (half a round trip, one_way_ns), the unit of those matrices. Which cores
 * take part is the scenario's choice, so that a sweep over core pairs shows
 * the cost within a cluster, across clusters and across dies.
 */
#include "apps/app_instance.h"
#include "hal/hal.h"
#include "lib/compiler.h"

static SW_CACHELINE_ALIGNED volatile uint32_t line_word;
static SW_CACHELINE_ALIGNED volatile uint32_t ready;

static int pingpong_main(void) {
  if (!app_single_instance("cacheline_pingpong")) return 1;
  const uint64_t round_trips = hal_param("round_trips");
  if (hal_app_cores() != 2 || round_trips == 0) {
    hal_log(HAL_LOG_ERROR, "cacheline_pingpong: runs on exactly two cores, with round_trips > 0");
    return 1;
  }
  const uint32_t me = hal_app_rank(); /* 0 swaps ping -> pong, 1 pong -> ping */
  if (me == 0) hal_name_shared(&line_word, sizeof(line_word), "pingpong_line");
  hal_fetch_add32(&ready, 1);
  while (hal_load32(&ready) < 2) hal_cpu_relax();
  const uint64_t t0 = hal_now_ns();
  for (uint64_t i = 0; i < round_trips; i++) {
    const uint32_t want = me == 0 ? 0u : 1u;
    /* Spin with CAS, as the matrices' benchmark does: each failed attempt
     * takes the line too. */
    while (hal_cmpxchg32(&line_word, want, want ^ 1u) != want) {
    }
  }
  const uint64_t elapsed = hal_now_ns() - t0;
  if (me == 0) {
    hal_stat_set("one_way_ns", (double)elapsed / (double)round_trips / 2.0);
    hal_log(HAL_LOG_INFO, "cacheline_pingpong: %.1f ns one way over %llu round trips", (double)elapsed / (double)round_trips / 2.0,
            (unsigned long long)round_trips);
  }
  return 0;
}

static const struct hal_param_decl pingpong_params[] = {
    {"round_trips", 1000, "Round trips of the line between the two cores.", 0, 0},
    {0, 0, 0, 0, 0},
};

const struct hal_app app_cacheline_pingpong = {
    "cacheline_pingpong", "Two cores hand a cache line back and forth with CAS: the one-way core-to-core latency.",
    pingpong_main, pingpong_params};
