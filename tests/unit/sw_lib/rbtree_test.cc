// sw/lib red-black tree: checked against std::set and the red-black
// invariants after every operation.
#include "lib/rbtree.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace {

struct Item {
  uint64_t key = 0;
  uint64_t seq = 0;  // insertion order, to check placement of equal keys
  sw_rb_node node{};
};

const Item* ItemOf(const sw_rb_node* n) { return sw_rb_entry(n, const Item, node); }

// Walks the subtree checking parent links, key order, no red-red and equal
// black heights. Returns the black height (NULL leaves count 1), or -1 after
// writing the first violation to *err.
int CheckSubtree(const sw_rb_node* n, const sw_rb_node* parent, std::string* err) {
  if (n == nullptr) return 1;
  const uint64_t key = ItemOf(n)->key;
  if (sw_rb_parent(n) != parent) {
    *err = "bad parent pointer at key " + std::to_string(key);
    return -1;
  }
  if ((n->parent_color & 2u) != 0) {
    *err = "stray bit in parent_color at key " + std::to_string(key);
    return -1;
  }
  if (sw_rb_is_red(n) && (sw_rb_is_red(n->left) || sw_rb_is_red(n->right))) {
    *err = "red node with red child at key " + std::to_string(key);
    return -1;
  }
  if (n->left != nullptr && ItemOf(n->left)->key > key) {
    *err = "left child greater than key " + std::to_string(key);
    return -1;
  }
  if (n->right != nullptr && ItemOf(n->right)->key < key) {
    *err = "right child less than key " + std::to_string(key);
    return -1;
  }
  const int lh = CheckSubtree(n->left, n, err);
  if (lh < 0) return -1;
  const int rh = CheckSubtree(n->right, n, err);
  if (rh < 0) return -1;
  if (lh != rh) {
    *err = "unequal black heights under key " + std::to_string(key);
    return -1;
  }
  return lh + (sw_rb_is_red(n) ? 0 : 1);
}

// "" when the tree is a valid red-black tree holding exactly `expected`, in
// order both ways.
std::string CheckTree(const sw_rb_root& root, const std::vector<uint64_t>& expected) {
  std::string err;
  if (root.node != nullptr && sw_rb_is_red(root.node)) return "red root";
  if (CheckSubtree(root.node, nullptr, &err) < 0) return err;

  std::vector<uint64_t> forward;
  for (const sw_rb_node* n = sw_rb_first(&root); n != nullptr; n = sw_rb_next(n)) {
    forward.push_back(ItemOf(n)->key);
    if (forward.size() > expected.size()) return "forward traversal too long";
  }
  if (forward != expected) return "forward traversal differs";

  std::vector<uint64_t> backward;
  for (const sw_rb_node* n = sw_rb_last(&root); n != nullptr; n = sw_rb_prev(n)) {
    backward.push_back(ItemOf(n)->key);
    if (backward.size() > expected.size()) return "backward traversal too long";
  }
  std::reverse(backward.begin(), backward.end());
  if (backward != expected) return "backward traversal differs";
  return "";
}

int Height(const sw_rb_node* n) {
  return n == nullptr ? 0 : 1 + std::max(Height(n->left), Height(n->right));
}

std::vector<uint64_t> Keys(const std::set<uint64_t>& s) { return {s.begin(), s.end()}; }

// Insertion the way drivers write it: search by hand, then link and colour.
// Returns false when the key is already present.
bool Insert(sw_rb_root* root, Item* item) {
  sw_rb_node** link = &root->node;
  sw_rb_node* parent = nullptr;
  while (*link != nullptr) {
    parent = *link;
    const uint64_t k = ItemOf(parent)->key;
    if (item->key == k) return false;
    link = item->key < k ? &parent->left : &parent->right;
  }
  sw_rb_link_node(&item->node, parent, link);
  sw_rb_insert_color(&item->node, root);
  return true;
}

bool LessByKey(const sw_rb_node* a, const sw_rb_node* b) { return ItemOf(a)->key < ItemOf(b)->key; }

int CmpKey(const void* key, const sw_rb_node* n) {
  const uint64_t k = *static_cast<const uint64_t*>(key);
  const uint64_t nk = ItemOf(n)->key;
  return k < nk ? -1 : (k > nk ? 1 : 0);
}

TEST(RbTree, EmptyTree) {
  sw_rb_root root = SW_RB_ROOT_INIT;
  EXPECT_TRUE(sw_rb_empty_root(&root));
  EXPECT_EQ(sw_rb_first(&root), nullptr);
  EXPECT_EQ(sw_rb_last(&root), nullptr);
  EXPECT_EQ(CheckTree(root, {}), "");
}

TEST(RbTree, SingleNodeInsertErase) {
  sw_rb_root root = SW_RB_ROOT_INIT;
  Item item;
  item.key = 42;
  sw_rb_clear_node(&item.node);
  EXPECT_TRUE(sw_rb_empty_node(&item.node));
  EXPECT_EQ(sw_rb_next(&item.node), nullptr);  // unlinked nodes have no neighbours

  ASSERT_TRUE(Insert(&root, &item));
  EXPECT_FALSE(sw_rb_empty_root(&root));
  EXPECT_FALSE(sw_rb_empty_node(&item.node));
  EXPECT_EQ(sw_rb_color(root.node), SW_RB_BLACK);
  EXPECT_EQ(sw_rb_first(&root), &item.node);
  EXPECT_EQ(sw_rb_last(&root), &item.node);
  EXPECT_EQ(sw_rb_next(&item.node), nullptr);
  EXPECT_EQ(sw_rb_prev(&item.node), nullptr);
  EXPECT_EQ(sw_rb_entry(sw_rb_first(&root), Item, node), &item);
  EXPECT_EQ(CheckTree(root, {42}), "");

  sw_rb_erase(&item.node, &root);
  EXPECT_TRUE(sw_rb_empty_root(&root));
  EXPECT_TRUE(sw_rb_empty_node(&item.node));
  EXPECT_EQ(CheckTree(root, {}), "");
}

// Sorted input is the worst case for an unbalanced tree and drives every
// insertion through the rotation cases on one side.
TEST(RbTree, MonotonicInsertStaysBalanced) {
  for (const bool ascending : {true, false}) {
    constexpr size_t kCount = 2048;
    std::vector<Item> items(kCount);
    sw_rb_root root = SW_RB_ROOT_INIT;
    std::set<uint64_t> model;
    for (size_t i = 0; i < kCount; i++) {
      items[i].key = ascending ? i : kCount - 1 - i;
      ASSERT_TRUE(Insert(&root, &items[i]));
      model.insert(items[i].key);
      ASSERT_EQ(CheckTree(root, Keys(model)), "") << "after inserting " << items[i].key;
    }
    // A red-black tree of n nodes is at most 2*log2(n+1) high: 22 here.
    EXPECT_LE(Height(root.node), 22);
    // Erase from the other end to exercise the mirrored erase cases.
    for (size_t i = 0; i < kCount; i++) {
      Item& it = items[kCount - 1 - i];
      sw_rb_erase(&it.node, &root);
      model.erase(it.key);
      ASSERT_EQ(CheckTree(root, Keys(model)), "") << "after erasing " << it.key;
    }
    EXPECT_TRUE(sw_rb_empty_root(&root));
  }
}

TEST(RbTree, RandomInsertEraseMatchesStdSet) {
  constexpr uint64_t kKeySpace = 4096;
  constexpr int kSteps = 12000;
  for (const uint32_t seed : {1u, 2u, 0xC0FFEEu}) {
    std::mt19937 rng(seed);
    std::vector<Item> items(kKeySpace);  // one slot per key: addresses stay stable
    for (uint64_t k = 0; k < kKeySpace; k++) {
      items[k].key = k;
      sw_rb_clear_node(&items[k].node);
    }
    sw_rb_root root = SW_RB_ROOT_INIT;
    std::set<uint64_t> model;
    std::uniform_int_distribution<uint64_t> key_dist(0, kKeySpace - 1);

    for (int step = 0; step < kSteps; step++) {
      // Bias towards insertion for the first half so the tree grows to a
      // couple of thousand nodes, then towards erasure so it shrinks again.
      const bool grow = step < kSteps / 2;
      const bool want_insert = grow ? rng() % 4 != 0 : rng() % 4 == 0;
      const uint64_t key = key_dist(rng);
      Item& it = items[key];
      if (want_insert) {
        const bool inserted = Insert(&root, &it);
        ASSERT_EQ(inserted, model.insert(key).second) << "seed " << seed << " step " << step;
      } else if (model.count(key) != 0) {
        sw_rb_erase(&it.node, &root);
        model.erase(key);
        ASSERT_TRUE(sw_rb_empty_node(&it.node));
      } else {
        ASSERT_TRUE(sw_rb_empty_node(&it.node)) << "key " << key << " linked but not in model";
      }
      ASSERT_EQ(CheckTree(root, Keys(model)), "") << "seed " << seed << " step " << step;
    }
    // Drain in random order.
    std::vector<uint64_t> rest = Keys(model);
    std::shuffle(rest.begin(), rest.end(), rng);
    for (const uint64_t key : rest) {
      sw_rb_erase(&items[key].node, &root);
      model.erase(key);
      ASSERT_EQ(CheckTree(root, Keys(model)), "") << "seed " << seed << " draining " << key;
    }
    EXPECT_TRUE(sw_rb_empty_root(&root));
  }
}

TEST(RbTree, EraseWhileIterating) {
  constexpr size_t kCount = 500;
  std::vector<Item> items(kCount);
  sw_rb_root root = SW_RB_ROOT_INIT;
  std::vector<uint64_t> order(kCount);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937(7));
  for (size_t i = 0; i < kCount; i++) {
    items[i].key = order[i];
    ASSERT_TRUE(Insert(&root, &items[i]));
  }
  // Remove odd keys, fetching the successor before each erase.
  std::vector<uint64_t> expected;
  for (sw_rb_node* n = sw_rb_first(&root); n != nullptr;) {
    sw_rb_node* next = sw_rb_next(n);
    if (ItemOf(n)->key % 2 == 1)
      sw_rb_erase(n, &root);
    else
      expected.push_back(ItemOf(n)->key);
    n = next;
  }
  EXPECT_EQ(expected.size(), kCount / 2);
  EXPECT_EQ(CheckTree(root, expected), "");
}

TEST(RbTree, AddKeepsEqualKeysInInsertionOrderAndFindLocates) {
  constexpr size_t kCount = 1000;
  std::vector<Item> items(kCount);
  sw_rb_root root = SW_RB_ROOT_INIT;
  std::mt19937 rng(99);
  std::multiset<uint64_t> model;
  for (size_t i = 0; i < kCount; i++) {
    items[i].key = rng() % 64;  // many duplicates
    items[i].seq = i;
    sw_rb_add(&items[i].node, &root, LessByKey);
    model.insert(items[i].key);
  }
  EXPECT_EQ(CheckTree(root, {model.begin(), model.end()}), "");

  const Item* prev = nullptr;
  for (const sw_rb_node* n = sw_rb_first(&root); n != nullptr; n = sw_rb_next(n)) {
    const Item* cur = ItemOf(n);
    if (prev != nullptr && prev->key == cur->key) {
      EXPECT_LT(prev->seq, cur->seq);
    }
    prev = cur;
  }

  for (uint64_t key = 0; key < 70; key++) {
    const sw_rb_node* found = sw_rb_find(&key, &root, CmpKey);
    if (model.count(key) != 0) {
      ASSERT_NE(found, nullptr) << key;
      EXPECT_EQ(ItemOf(found)->key, key);
    } else {
      EXPECT_EQ(found, nullptr) << key;
    }
  }
}

TEST(RbTree, EntrySafeHandlesNull) {
  const sw_rb_node* none = nullptr;
  EXPECT_EQ(sw_rb_entry_safe(none, const Item, node), nullptr);
  Item item;
  const sw_rb_node* some = &item.node;
  EXPECT_EQ(sw_rb_entry_safe(some, const Item, node), &item);
}

}  // namespace
