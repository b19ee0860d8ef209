/*
 * Intrusive red-black tree in the style of Linux's <linux/rbtree.h>.
 *
 * The caller embeds a struct sw_rb_node in its objects, searches for the
 * insertion point itself, then calls sw_rb_link_node() and
 * sw_rb_insert_color(); sw_rb_add()/sw_rb_find() do the search with a
 * comparison callback. Not thread-safe: callers lock. The library does no
 * time accounting; drivers charge their own costs (e.g. "rbtree_visit").
 */
#ifndef SMMU_VP_SW_LIB_RBTREE_H
#define SMMU_VP_SW_LIB_RBTREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/compiler.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The parent pointer and the colour share a word: nodes are at least 4-byte
 * aligned, so bit 0 is free for the colour (0 red, 1 black). */
struct sw_rb_node {
  uintptr_t parent_color;
  struct sw_rb_node *left;
  struct sw_rb_node *right;
};

struct sw_rb_root {
  struct sw_rb_node *node;
};

#define SW_RB_ROOT_INIT {NULL}
#define SW_RB_RED 0u
#define SW_RB_BLACK 1u

#define sw_rb_entry(ptr, type, member) sw_container_of(ptr, type, member)
#define sw_rb_entry_safe(ptr, type, member) \
  ((ptr) != NULL ? sw_rb_entry(ptr, type, member) : NULL)

static inline struct sw_rb_node *sw_rb_parent(const struct sw_rb_node *node) {
  return (struct sw_rb_node *)(node->parent_color & ~(uintptr_t)3);
}

static inline unsigned sw_rb_color(const struct sw_rb_node *node) {
  return (unsigned)(node->parent_color & 1u);
}

/* NULL leaves count as black. */
static inline bool sw_rb_is_red(const struct sw_rb_node *node) {
  return node != NULL && sw_rb_color(node) == SW_RB_RED;
}

static inline bool sw_rb_empty_root(const struct sw_rb_root *root) { return root->node == NULL; }

/* A node that points at itself is in no tree (as Linux RB_CLEAR_NODE), so
 * owners can tell whether an object is linked. */
static inline void sw_rb_clear_node(struct sw_rb_node *node) {
  node->parent_color = (uintptr_t)node;
}

static inline bool sw_rb_empty_node(const struct sw_rb_node *node) {
  return node->parent_color == (uintptr_t)node;
}

/* Attach a red leaf at *link, a NULL child slot of parent (or root->node for
 * an empty tree); sw_rb_insert_color() must follow. */
static inline void sw_rb_link_node(struct sw_rb_node *node, struct sw_rb_node *parent,
                                   struct sw_rb_node **link) {
  node->parent_color = (uintptr_t)parent;
  node->left = NULL;
  node->right = NULL;
  *link = node;
}

void sw_rb_insert_color(struct sw_rb_node *node, struct sw_rb_root *root);
/* Unlinks node; it is left cleared (sw_rb_empty_node() is true). */
void sw_rb_erase(struct sw_rb_node *node, struct sw_rb_root *root);

/* In-order iteration; NULL past either end. */
struct sw_rb_node *sw_rb_first(const struct sw_rb_root *root);
struct sw_rb_node *sw_rb_last(const struct sw_rb_root *root);
struct sw_rb_node *sw_rb_next(const struct sw_rb_node *node);
struct sw_rb_node *sw_rb_prev(const struct sw_rb_node *node);

/* Insert with less(a, b) ordering; equal keys go after existing ones. */
static inline void sw_rb_add(struct sw_rb_node *node, struct sw_rb_root *root,
                             bool (*less)(const struct sw_rb_node *, const struct sw_rb_node *)) {
  struct sw_rb_node **link = &root->node;
  struct sw_rb_node *parent = NULL;

  while (*link != NULL) {
    parent = *link;
    link = less(node, parent) ? &parent->left : &parent->right;
  }
  sw_rb_link_node(node, parent, link);
  sw_rb_insert_color(node, root);
}

/* cmp(key, node) < 0 when key sorts before node; returns a matching node or
 * NULL. */
static inline struct sw_rb_node *sw_rb_find(const void *key, const struct sw_rb_root *root,
                                            int (*cmp)(const void *, const struct sw_rb_node *)) {
  struct sw_rb_node *node = root->node;

  while (node != NULL) {
    const int c = cmp(key, node);
    if (c == 0)
      return node;
    node = c < 0 ? node->left : node->right;
  }
  return NULL;
}

#ifdef __cplusplus
}
#endif

#endif /* SMMU_VP_SW_LIB_RBTREE_H */
