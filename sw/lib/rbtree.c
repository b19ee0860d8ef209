/*
 * Red-black tree rebalancing, following the CLRS formulation with NULL
 * leaves (hence the explicit parent tracked through erase fix-up).
 */
#include "lib/rbtree.h"

static inline void set_parent(struct sw_rb_node *node, struct sw_rb_node *parent) {
  node->parent_color = (uintptr_t)parent | (node->parent_color & 1u);
}

static inline void set_color(struct sw_rb_node *node, unsigned color) {
  node->parent_color = (node->parent_color & ~(uintptr_t)1) | color;
}

static inline void set_parent_color(struct sw_rb_node *node, struct sw_rb_node *parent,
                                    unsigned color) {
  node->parent_color = (uintptr_t)parent | color;
}

static inline bool is_black(const struct sw_rb_node *node) { return !sw_rb_is_red(node); }

/* Make `replacement` take old's place under parent (or at the root). */
static inline void change_child(struct sw_rb_node *old, struct sw_rb_node *replacement,
                                struct sw_rb_node *parent, struct sw_rb_root *root) {
  if (parent == NULL)
    root->node = replacement;
  else if (parent->left == old)
    parent->left = replacement;
  else
    parent->right = replacement;
}

static void rotate_left(struct sw_rb_node *x, struct sw_rb_root *root) {
  struct sw_rb_node *y = x->right;
  struct sw_rb_node *parent = sw_rb_parent(x);

  x->right = y->left;
  if (y->left != NULL)
    set_parent(y->left, x);
  y->left = x;
  set_parent(y, parent);
  change_child(x, y, parent, root);
  set_parent(x, y);
}

static void rotate_right(struct sw_rb_node *x, struct sw_rb_root *root) {
  struct sw_rb_node *y = x->left;
  struct sw_rb_node *parent = sw_rb_parent(x);

  x->left = y->right;
  if (y->right != NULL)
    set_parent(y->right, x);
  y->right = x;
  set_parent(y, parent);
  change_child(x, y, parent, root);
  set_parent(x, y);
}

void sw_rb_insert_color(struct sw_rb_node *node, struct sw_rb_root *root) {
  struct sw_rb_node *parent;

  /* Only a red node under a red parent violates the invariants. A red parent
   * is never the root, so the grandparent exists. */
  while ((parent = sw_rb_parent(node)) != NULL && sw_rb_is_red(parent)) {
    struct sw_rb_node *gparent = sw_rb_parent(parent);

    if (parent == gparent->left) {
      struct sw_rb_node *uncle = gparent->right;
      if (sw_rb_is_red(uncle)) {
        /* Push the blackness down from the grandparent and retry there. */
        set_color(parent, SW_RB_BLACK);
        set_color(uncle, SW_RB_BLACK);
        set_color(gparent, SW_RB_RED);
        node = gparent;
        continue;
      }
      if (node == parent->right) {
        /* Straighten the zig-zag so one rotation at gparent suffices. */
        rotate_left(parent, root);
        node = parent;
        parent = sw_rb_parent(node);
      }
      set_color(parent, SW_RB_BLACK);
      set_color(gparent, SW_RB_RED);
      rotate_right(gparent, root);
      break;
    }

    struct sw_rb_node *uncle = gparent->left;
    if (sw_rb_is_red(uncle)) {
      set_color(parent, SW_RB_BLACK);
      set_color(uncle, SW_RB_BLACK);
      set_color(gparent, SW_RB_RED);
      node = gparent;
      continue;
    }
    if (node == parent->left) {
      rotate_right(parent, root);
      node = parent;
      parent = sw_rb_parent(node);
    }
    set_color(parent, SW_RB_BLACK);
    set_color(gparent, SW_RB_RED);
    rotate_left(gparent, root);
    break;
  }
  set_color(root->node, SW_RB_BLACK);
}

/* x (possibly NULL, hence the explicit parent) carries an extra black after
 * a black node was removed above it. */
static void erase_fixup(struct sw_rb_node *x, struct sw_rb_node *parent, struct sw_rb_root *root) {
  while (x != root->node && is_black(x)) {
    /* x's subtree is one black short, so its sibling is a real node. */
    if (x == parent->left) {
      struct sw_rb_node *sibling = parent->right;
      if (sw_rb_is_red(sibling)) {
        /* Turn a red sibling into a black one to reach the cases below. */
        set_color(sibling, SW_RB_BLACK);
        set_color(parent, SW_RB_RED);
        rotate_left(parent, root);
        sibling = parent->right;
      }
      if (is_black(sibling->left) && is_black(sibling->right)) {
        /* Remove one black from both sides; the deficit moves up. */
        set_color(sibling, SW_RB_RED);
        x = parent;
        parent = sw_rb_parent(x);
        continue;
      }
      if (is_black(sibling->right)) {
        set_color(sibling->left, SW_RB_BLACK);
        set_color(sibling, SW_RB_RED);
        rotate_right(sibling, root);
        sibling = parent->right;
      }
      /* The sibling's red far child lends a black to x's side. */
      set_color(sibling, sw_rb_color(parent));
      set_color(parent, SW_RB_BLACK);
      set_color(sibling->right, SW_RB_BLACK);
      rotate_left(parent, root);
      x = root->node;
      break;
    }

    struct sw_rb_node *sibling = parent->left;
    if (sw_rb_is_red(sibling)) {
      set_color(sibling, SW_RB_BLACK);
      set_color(parent, SW_RB_RED);
      rotate_right(parent, root);
      sibling = parent->left;
    }
    if (is_black(sibling->left) && is_black(sibling->right)) {
      set_color(sibling, SW_RB_RED);
      x = parent;
      parent = sw_rb_parent(x);
      continue;
    }
    if (is_black(sibling->left)) {
      set_color(sibling->right, SW_RB_BLACK);
      set_color(sibling, SW_RB_RED);
      rotate_left(sibling, root);
      sibling = parent->left;
    }
    set_color(sibling, sw_rb_color(parent));
    set_color(parent, SW_RB_BLACK);
    set_color(sibling->left, SW_RB_BLACK);
    rotate_right(parent, root);
    x = root->node;
    break;
  }
  if (x != NULL)
    set_color(x, SW_RB_BLACK);
}

void sw_rb_erase(struct sw_rb_node *node, struct sw_rb_root *root) {
  struct sw_rb_node *x;       /* the node moving into the vacated position */
  struct sw_rb_node *xparent; /* its parent afterwards (x may be NULL) */
  unsigned removed_color;

  if (node->left == NULL || node->right == NULL) {
    x = node->left != NULL ? node->left : node->right;
    xparent = sw_rb_parent(node);
    removed_color = sw_rb_color(node);
    if (x != NULL)
      set_parent(x, xparent);
    change_child(node, x, xparent, root);
  } else {
    /* Two children: the in-order successor (no left child) takes node's
     * place and colour, so the colour lost is the successor's. */
    struct sw_rb_node *succ = node->right;
    while (succ->left != NULL)
      succ = succ->left;
    removed_color = sw_rb_color(succ);
    x = succ->right;
    if (sw_rb_parent(succ) == node) {
      xparent = succ;
    } else {
      xparent = sw_rb_parent(succ);
      xparent->left = x;
      if (x != NULL)
        set_parent(x, xparent);
      succ->right = node->right;
      set_parent(node->right, succ);
    }
    struct sw_rb_node *parent = sw_rb_parent(node);
    change_child(node, succ, parent, root);
    succ->left = node->left;
    set_parent(node->left, succ);
    set_parent_color(succ, parent, sw_rb_color(node));
  }

  if (removed_color == SW_RB_BLACK)
    erase_fixup(x, xparent, root);
  sw_rb_clear_node(node);
}

static struct sw_rb_node *leftmost(struct sw_rb_node *node) {
  while (node->left != NULL)
    node = node->left;
  return node;
}

static struct sw_rb_node *rightmost(struct sw_rb_node *node) {
  while (node->right != NULL)
    node = node->right;
  return node;
}

struct sw_rb_node *sw_rb_first(const struct sw_rb_root *root) {
  return root->node != NULL ? leftmost(root->node) : NULL;
}

struct sw_rb_node *sw_rb_last(const struct sw_rb_root *root) {
  return root->node != NULL ? rightmost(root->node) : NULL;
}

struct sw_rb_node *sw_rb_next(const struct sw_rb_node *node) {
  if (sw_rb_empty_node(node))
    return NULL;
  if (node->right != NULL)
    return leftmost(node->right);
  /* Climb while coming from a right child; the first ancestor reached from
   * its left is next. */
  struct sw_rb_node *parent;
  while ((parent = sw_rb_parent(node)) != NULL && node == parent->right)
    node = parent;
  return parent;
}

struct sw_rb_node *sw_rb_prev(const struct sw_rb_node *node) {
  if (sw_rb_empty_node(node))
    return NULL;
  if (node->left != NULL)
    return rightmost(node->left);
  struct sw_rb_node *parent;
  while ((parent = sw_rb_parent(node)) != NULL && node == parent->left)
    node = parent;
  return parent;
}
