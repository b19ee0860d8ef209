/*
 * The queued spinlock (Linux kernel/locking/qspinlock.c, arm64's spinlock
 * since 4.18), on the HAL's 32-bit atomics. One word, `next` of struct
 * sw_spinlock:
 *   bits 0-7   locked byte
 *   bit  8     pending: the one waiter that spins on the word before any
 *              queue forms
 *   bits 16-30 tail: the last queued waiter, ((cpu + 1) << 2 | nesting index)
 *   bit  31    marks the lock as queued (a ticket count never reaches it)
 * Waiters beyond the pending one queue on per-core MCS nodes: only the
 * queue's head polls the lock word; each other waiter polls its own node,
 * which its predecessor writes when it becomes head. So a release moves the
 * word's line to one core, not to every waiter as a ticket lock does.
 */
#include "lib/qspinlock.h"

#include "hal/hal.h"

#define Q_LOCKED 1u
#define Q_LOCKED_MASK 0xffu
#define Q_PENDING (1u << 8)
#define Q_LOCKED_PENDING_MASK 0xffffu
#define Q_TAIL_SHIFT 16
#define Q_TAIL_MASK (0x7fffu << Q_TAIL_SHIFT)
#define Q_MARK (1u << 31)
/* Nesting levels a core may queue at (task, softirq, hardirq, NMI). */
#define Q_MAX_NODES 4u

/* A core's nodes share its one cache line, as Linux's per-CPU qnodes do. */
struct qnode {
  volatile uint32_t locked; /* set by the predecessor: this node is the queue's head */
  volatile uint32_t next;   /* the successor's tail code; 0: none yet */
  uint32_t count;           /* node 0 only: levels in use on this core (the core's own) */
  uint32_t unused;
};

static struct qnode *qnodes; /* Q_MAX_NODES per core, allocated on first use */

bool sw_qspin_nodes_ready(void) {
  if (qnodes) return true;
  phys_addr_t pa;
  qnodes = hal_dma_alloc(sizeof(struct qnode) * Q_MAX_NODES * hal_cpu_count(), 64, &pa);
  return qnodes != NULL;
}

static uint32_t tail_code(unsigned cpu, unsigned idx) { return ((cpu + 1u) << 2 | idx) << Q_TAIL_SHIFT; }

static struct qnode *node_of(uint32_t tail) {
  const uint32_t code = (tail & Q_TAIL_MASK) >> Q_TAIL_SHIFT;
  return &qnodes[((code >> 2) - 1u) * Q_MAX_NODES + (code & 3u)];
}

uint32_t sw_qspin_unlocked_word(void) { return Q_MARK; }

bool sw_qspin_trylock(volatile uint32_t *lock) {
  /* queued_spin_trylock: only a word with nothing but the mark is free. */
  if (hal_load32(lock) != Q_MARK) return false;
  return hal_cmpxchg32(lock, Q_MARK, Q_MARK | Q_LOCKED) == Q_MARK;
}

/* xchg_tail: swaps the word's upper halfword (tail and mark) in one
 * instruction, as Linux does on arm64 (kernels for under 16K CPUs).
 * Little-endian: the halfword at byte offset 2. */
static uint32_t xchg_tail(volatile uint32_t *lock, uint32_t tail) {
  volatile uint16_t *upper = (volatile uint16_t *)((volatile uint8_t *)lock + 2);
  const uint16_t old = hal_xchg16(upper, (uint16_t)((tail | Q_MARK) >> Q_TAIL_SHIFT));
  return (uint32_t)old << Q_TAIL_SHIFT;
}

static void queue_and_wait(volatile uint32_t *lock) {
  const unsigned cpu = hal_cpu_id();
  struct qnode *base = &qnodes[cpu * Q_MAX_NODES];
  const unsigned idx = base->count++;
  if (idx >= Q_MAX_NODES) {
    /* Nested deeper than the nodes (Linux: an NMI within every level): spin
     * on the word itself. */
    while (!sw_qspin_trylock(lock)) hal_cpu_relax();
    base->count--;
    return;
  }
  struct qnode *node = &base[idx];
  const uint32_t tail = tail_code(cpu, idx);
  hal_store32(&node->locked, 0);
  hal_store32(&node->next, 0);
  if (sw_qspin_trylock(lock)) {
    base->count--;
    return;
  }
  const uint32_t old = xchg_tail(lock, tail);
  uint32_t next = 0;
  if (old & Q_TAIL_MASK) {
    /* Behind another waiter: link in and poll our own node. */
    hal_store32(&node_of(old)->next, tail);
    hal_poll32(&node->locked, ~0u, 0, HAL_POLL_NE, 0, NULL);
    next = hal_load32(&node->next);
  }
  /* The queue's head: wait for the owner and any pending waiter to go. */
  const uint32_t val = hal_poll32(lock, Q_LOCKED_PENDING_MASK, 0, HAL_POLL_EQ, 0, NULL);
  /* The last in the queue takes the lock and empties the tail in one go. */
  if ((val & Q_TAIL_MASK) == tail && hal_cmpxchg32(lock, val, Q_MARK | Q_LOCKED) == val) {
    base->count--;
    return;
  }
  /* Others queued behind: take the lock, then make the next one head. */
  (void)hal_fetch_or32(lock, Q_LOCKED);
  if (!next) next = hal_poll32(&node->next, ~0u, 0, HAL_POLL_NE, 0, NULL);
  hal_store32(&node_of(next)->locked, 1);
  base->count--;
}

void sw_qspin_lock(volatile uint32_t *lock) {
  uint32_t val = hal_cmpxchg32(lock, Q_MARK, Q_MARK | Q_LOCKED);
  if (val == Q_MARK) return;
  /* A pending waiter taking over from the owner: give it a moment
   * (Linux's _Q_PENDING_LOOPS, 1 on arm64: at most two more reads). */
  if ((val & ~Q_MARK) == Q_PENDING) val = hal_poll32(lock, ~0u, Q_MARK | Q_PENDING, HAL_POLL_NE, 2, NULL);
  if (!(val & ~(Q_MARK | Q_LOCKED_MASK))) {
    /* Nobody waits yet: become the pending waiter. */
    val = hal_fetch_or32(lock, Q_PENDING);
    if (!(val & ~(Q_MARK | Q_LOCKED_MASK))) {
      if (val & Q_LOCKED_MASK) hal_poll32(lock, Q_LOCKED_MASK, 0, HAL_POLL_EQ, 0, NULL);
      (void)hal_fetch_add32(lock, Q_LOCKED - Q_PENDING); /* clear pending, set locked */
      return;
    }
    /* Someone else was pending or queued: undo ours if we set it. */
    if (!(val & Q_PENDING)) (void)hal_fetch_andnot32(lock, Q_PENDING);
  }
  queue_and_wait(lock);
}

void sw_qspin_unlock(volatile uint32_t *lock) { (void)hal_fetch_andnot32(lock, Q_LOCKED_MASK); }

bool sw_qspin_is_locked(const volatile uint32_t *lock) { return (hal_load32(lock) & ~Q_MARK) != 0; }
