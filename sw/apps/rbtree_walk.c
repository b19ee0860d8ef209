/*
 * rbtree_walk: a walk over a red-black tree too large for the core's caches,
 * the pointer chase behind the IOVA allocator's long walks before 2017 (seed
 * 001) and the load a memory-latency test measures. It builds a tree of
 * `nodes` nodes of 64 bytes (a slab-allocated struct iova: docs/dma-mapping.md,
 * "Cold tree walks") and a reference tree of `ref_nodes` that a core's private
 * caches hold, walks each in key order `warmup_walks` times untimed and then
 * `walks` times timed, and reports the time per node of each and their difference,
 * extra_ns_per_node: what a node costs beyond a private-cache hit, the unit
 * of the published latency-by-working-set curves less their L2 latency
 * (docs/figures.json, cold_walk_kunpeng920).
 *
 * Every step from one node to the next is charged `rbtree_visit`, and each
 * walk reports its working set to hal_cost_walk, as sw/iommu/iova.c does.
 * Consecutive keys lie far apart in memory (node i of the key order at slot
 * i * stride mod nodes), so that on a real core the walk is a chase across the
 * whole working set rather than a stream a prefetcher follows. Building the
 * trees is not timed.
 */
#include "apps/app_instance.h"
#include "hal/hal.h"
#include "lib/compiler.h"
#include "lib/rbtree.h"

#define WALK_NODE_BYTES 64u
#define WALK_CHUNK_NODES 16384u /* nodes per allocation: 1 MiB */

struct walk_node {
  struct sw_rb_node rb;
  uint64_t key;
  uint8_t pad[WALK_NODE_BYTES - sizeof(struct sw_rb_node) - sizeof(uint64_t)];
};
_Static_assert(sizeof(struct walk_node) == WALK_NODE_BYTES, "a node fills one 64-byte line");

struct walk_tree {
  struct sw_rb_root root;
  uint64_t nodes;
  uint64_t chunks;
  struct walk_node **chunk; /* chunk[i] holds nodes i * WALK_CHUNK_NODES on */
};

static struct walk_node *node_at(const struct walk_tree *t, uint64_t slot) {
  return &t->chunk[slot / WALK_CHUNK_NODES][slot % WALK_CHUNK_NODES];
}

static uint64_t gcd(uint64_t a, uint64_t b) {
  while (b != 0) {
    const uint64_t r = a % b;
    a = b;
    b = r;
  }
  return a;
}

/* A stride near 0.618 of the tree, coprime with its size: slot i * stride mod
 * nodes visits every slot once, consecutive keys far apart. */
static uint64_t scatter_stride(uint64_t nodes) {
  uint64_t stride = nodes * 618u / 1000u;
  if (stride == 0) stride = 1;
  while (gcd(stride, nodes) != 1) stride++;
  return stride;
}

static void tree_free(struct walk_tree *t) {
  if (t->chunk == NULL) return;
  for (uint64_t i = 0; i < t->chunks; i++)
    if (t->chunk[i] != NULL) hal_dma_free(t->chunk[i]);
  hal_dma_free(t->chunk);
  t->chunk = NULL;
}

/* Keys 0 .. nodes-1 inserted in order (each insertion finds its place at the
 * right edge); key k lives at slot k * stride mod nodes. */
static bool tree_build(struct walk_tree *t, uint64_t nodes) {
  phys_addr_t pa;
  t->root.node = NULL;
  t->nodes = nodes;
  t->chunks = (nodes + WALK_CHUNK_NODES - 1) / WALK_CHUNK_NODES;
  t->chunk = hal_dma_alloc(t->chunks * sizeof(*t->chunk), 64, &pa);
  if (t->chunk == NULL) return false;
  for (uint64_t i = 0; i < t->chunks; i++) {
    const uint64_t in_chunk = SW_MIN(nodes - i * WALK_CHUNK_NODES, (uint64_t)WALK_CHUNK_NODES);
    t->chunk[i] = hal_dma_alloc(in_chunk * WALK_NODE_BYTES, WALK_NODE_BYTES, &pa);
    if (t->chunk[i] == NULL) return false;
  }
  const uint64_t stride = scatter_stride(nodes);
  uint64_t slot = 0;
  for (uint64_t key = 0; key < nodes; key++) {
    struct walk_node *n = node_at(t, slot);
    n->key = key;
    if (t->root.node == NULL) {
      sw_rb_link_node(&n->rb, NULL, &t->root.node);
    } else {
      /* The largest key so far is the rightmost node: the new one is its
       * right child, then the tree rebalances. */
      struct sw_rb_node *parent = t->root.node;
      while (parent->right != NULL) parent = parent->right;
      sw_rb_link_node(&n->rb, parent, &parent->right);
    }
    sw_rb_insert_color(&n->rb, &t->root);
    slot = (slot + stride) % nodes;
  }
  return true;
}

/* One in-order walk, counting every node it steps on (down to a left child,
 * up to a parent, across to a right child: about two steps per node, as the
 * allocator's own count has it); sums the keys it passes. */
static uint64_t walk_in_order(const struct walk_tree *t, uint64_t *key_sum) {
  uint64_t steps = 0;
  uint64_t sum = 0;
  const struct sw_rb_node *n = t->root.node;
  if (n == NULL) return 0;
  steps++;
  while (n->left != NULL) {
    n = n->left;
    steps++;
  }
  while (n != NULL) {
    sum += sw_rb_entry(n, struct walk_node, rb)->key;
    if (n->right != NULL) {
      n = n->right;
      steps++;
      while (n->left != NULL) {
        n = n->left;
        steps++;
      }
      continue;
    }
    const struct sw_rb_node *parent = sw_rb_parent(n);
    while (parent != NULL && n == parent->right) {
      n = parent;
      parent = sw_rb_parent(n);
      steps++;
    }
    n = parent;
    if (n != NULL) steps++;
  }
  *key_sum = sum;
  return steps;
}

struct walk_result {
  double ns_per_node;
  double steps_per_node;
};

/* `warmup` untimed walks, then `walks` timed ones. False if a walk missed a
 * key. */
static bool time_walks(const struct walk_tree *t, uint64_t warmup, uint64_t walks, int visit_cost,
                       struct walk_result *r) {
  const uint64_t want = t->nodes % 2 == 0 ? t->nodes / 2 * (t->nodes - 1) : (t->nodes - 1) / 2 * t->nodes;
  uint64_t steps = 0;
  uint64_t elapsed_ps = 0;
  for (uint64_t w = 0; w < warmup + walks; w++) {
    uint64_t sum = 0;
    const uint64_t t0 = hal_now_ps();
    const uint64_t s = walk_in_order(t, &sum);
    hal_cost_id(visit_cost, s);
    hal_cost_walk(t->nodes, t->nodes * WALK_NODE_BYTES);
    const uint64_t t1 = hal_now_ps();
    if (sum != want) return false;
    if (w < warmup) continue;
    steps += s;
    elapsed_ps += t1 - t0;
  }
  r->ns_per_node = (double)elapsed_ps / 1000.0 / (double)(walks * t->nodes);
  r->steps_per_node = (double)steps / (double)(walks * t->nodes);
  return true;
}

static int rbtree_walk_main(void) {
  if (!app_single_instance("rbtree_walk")) return 1;
  const uint64_t nodes = hal_param("nodes");
  const uint64_t ref_nodes = hal_param("ref_nodes");
  const uint64_t walks = hal_param("walks");
  const uint64_t warmup = hal_param("warmup_walks");
  if (hal_app_cores() != 1 || nodes == 0 || ref_nodes == 0 || walks == 0) {
    hal_log(HAL_LOG_ERROR, "rbtree_walk: runs on one core, with nodes, ref_nodes and walks > 0");
    return 1;
  }
  const int visit_cost = hal_cost_lookup("rbtree_visit");
  struct walk_tree ref = {0};
  struct walk_tree big = {0};
  int ret = 0;
  if (!tree_build(&ref, ref_nodes) || !tree_build(&big, nodes)) {
    hal_log(HAL_LOG_ERROR,
            "rbtree_walk: the DMA region cannot hold %llu + %llu nodes of %u bytes (%llu KiB): raise "
            "platform.dram.dma_region.size (and platform.dram.size)",
            (unsigned long long)ref_nodes, (unsigned long long)nodes, WALK_NODE_BYTES,
            (unsigned long long)((ref_nodes + nodes) * WALK_NODE_BYTES / 1024));
    ret = 1;
    goto out;
  }
  struct walk_result r_ref;
  struct walk_result r_big;
  if (!time_walks(&ref, warmup, walks, visit_cost, &r_ref) || !time_walks(&big, warmup, walks, visit_cost, &r_big)) {
    hal_log(HAL_LOG_ERROR, "rbtree_walk: an in-order walk missed keys: the tree is broken");
    ret = 2;
    goto out;
  }
  hal_stat_set("working_set_kib", (double)(nodes * WALK_NODE_BYTES) / 1024.0);
  hal_stat_set("ns_per_node", r_big.ns_per_node);
  hal_stat_set("ref_ns_per_node", r_ref.ns_per_node);
  hal_stat_set("extra_ns_per_node", r_big.ns_per_node - r_ref.ns_per_node);
  hal_stat_set("steps_per_node", r_big.steps_per_node);
  hal_log(HAL_LOG_INFO,
          "rbtree_walk: %llu nodes (%.0f KiB): %.2f ns per node, %.2f ns in a %llu-node tree, %.2f ns more; %.2f steps "
          "per node",
          (unsigned long long)nodes, (double)(nodes * WALK_NODE_BYTES) / 1024.0, r_big.ns_per_node,
          r_ref.ns_per_node, (unsigned long long)ref_nodes, r_big.ns_per_node - r_ref.ns_per_node,
          r_big.steps_per_node);
out:
  tree_free(&big);
  tree_free(&ref);
  return ret;
}

static const struct hal_param_decl rbtree_walk_params[] = {
    {"nodes", 57344, "Nodes of the tree walked, 64 bytes each (57344: 3.5 MiB).", 1ull << 28, 0},
    {"ref_nodes", 2048,
     "Nodes of the reference tree (2048: 128 KiB); it must fit the private caches for extra_ns_per_node to be the "
     "cost beyond a private hit.",
     1ull << 28, 0},
    {"walks", 4, "Timed in-order walks of each tree.", 1000, 0},
    {"warmup_walks", 1,
     "Untimed walks of each tree before the timed ones (the model's charge is the same without; a real core's "
     "caches fill).",
     1000, 0},
    {0, 0, 0, 0, 0},
};

const struct hal_app app_rbtree_walk = {
    "rbtree_walk",
    "Walks a red-black tree larger than the caches in key order: the time per node beyond a private-cache hit.",
    rbtree_walk_main, rbtree_walk_params};
