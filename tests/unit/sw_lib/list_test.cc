// sw/lib intrusive list, plus the compiler.h helpers it is built on.
#include "lib/list.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "lib/compiler.h"

namespace {

struct Entry {
  int value = 0;
  sw_list_head link{};  // not the first member: container_of must subtract
};

std::vector<int> Values(sw_list_head* head) {
  std::vector<int> out;
  Entry* pos;
  sw_list_for_each_entry(pos, head, link) out.push_back(pos->value);
  return out;
}

std::vector<int> ValuesBackward(sw_list_head* head) {
  std::vector<int> out;
  for (sw_list_head* p = head->prev; p != head; p = p->prev)
    out.push_back(sw_list_entry(p, Entry, link)->value);
  return out;
}

TEST(List, StaticAndDynamicInitAreEmpty) {
  static SW_LIST_HEAD(static_head);
  EXPECT_TRUE(sw_list_empty(&static_head));
  EXPECT_EQ(static_head.next, &static_head);
  EXPECT_EQ(static_head.prev, &static_head);

  sw_list_head head;
  sw_list_init(&head);
  EXPECT_TRUE(sw_list_empty(&head));
  EXPECT_FALSE(sw_list_is_singular(&head));
  EXPECT_EQ(sw_list_first_entry_or_null(&head, Entry, link), nullptr);
  EXPECT_TRUE(Values(&head).empty());
}

TEST(List, AddIsStackOrderAddTailIsQueueOrder) {
  Entry e[4];
  for (int i = 0; i < 4; i++) e[i].value = i;

  sw_list_head stack = SW_LIST_HEAD_INIT(stack);
  for (Entry& x : e) sw_list_add(&x.link, &stack);
  EXPECT_EQ(Values(&stack), (std::vector<int>{3, 2, 1, 0}));
  EXPECT_EQ(ValuesBackward(&stack), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(sw_list_first_entry(&stack, Entry, link), &e[3]);
  EXPECT_EQ(sw_list_last_entry(&stack, Entry, link), &e[0]);

  sw_list_head queue = SW_LIST_HEAD_INIT(queue);
  for (Entry& x : e) sw_list_add_tail(&x.link, &queue);
  EXPECT_EQ(Values(&queue), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(ValuesBackward(&queue), (std::vector<int>{3, 2, 1, 0}));
  EXPECT_EQ(sw_list_first_entry(&queue, Entry, link), &e[0]);
  EXPECT_EQ(sw_list_first_entry_or_null(&queue, Entry, link), &e[0]);
  EXPECT_EQ(sw_list_last_entry(&queue, Entry, link), &e[3]);
}

TEST(List, DelFromHeadMiddleTail) {
  Entry e[5];
  sw_list_head head = SW_LIST_HEAD_INIT(head);
  for (int i = 0; i < 5; i++) {
    e[i].value = i;
    sw_list_add_tail(&e[i].link, &head);
  }
  sw_list_del(&e[2].link);
  EXPECT_EQ(e[2].link.next, nullptr);
  EXPECT_EQ(e[2].link.prev, nullptr);
  EXPECT_EQ(Values(&head), (std::vector<int>{0, 1, 3, 4}));
  sw_list_del(&e[0].link);
  sw_list_del(&e[4].link);
  EXPECT_EQ(Values(&head), (std::vector<int>{1, 3}));
  EXPECT_EQ(ValuesBackward(&head), (std::vector<int>{3, 1}));
  sw_list_del(&e[1].link);
  EXPECT_TRUE(sw_list_is_singular(&head));
  sw_list_del(&e[3].link);
  EXPECT_TRUE(sw_list_empty(&head));
  EXPECT_EQ(head.next, &head);
  EXPECT_EQ(head.prev, &head);
}

TEST(List, DelInitLeavesAnEmptyList) {
  Entry a, b;
  sw_list_head head = SW_LIST_HEAD_INIT(head);
  sw_list_add_tail(&a.link, &head);
  sw_list_add_tail(&b.link, &head);
  sw_list_del_init(&a.link);
  EXPECT_TRUE(sw_list_empty(&a.link));
  sw_list_del_init(&a.link);  // deleting again is harmless
  EXPECT_TRUE(sw_list_empty(&a.link));
  EXPECT_TRUE(sw_list_is_singular(&head));
  EXPECT_EQ(sw_list_first_entry(&head, Entry, link), &b);
}

TEST(List, MoveTail) {
  Entry e[3];
  sw_list_head head = SW_LIST_HEAD_INIT(head);
  sw_list_head other = SW_LIST_HEAD_INIT(other);
  for (int i = 0; i < 3; i++) {
    e[i].value = i;
    sw_list_add_tail(&e[i].link, &head);
  }
  sw_list_move_tail(&e[0].link, &head);  // rotate within the list
  EXPECT_EQ(Values(&head), (std::vector<int>{1, 2, 0}));
  sw_list_move_tail(&e[2].link, &other);  // move between lists
  EXPECT_EQ(Values(&head), (std::vector<int>{1, 0}));
  EXPECT_EQ(Values(&other), (std::vector<int>{2}));
}

TEST(List, ForEachAndForEachEntry) {
  Entry e[6];
  sw_list_head head = SW_LIST_HEAD_INIT(head);
  for (int i = 0; i < 6; i++) {
    e[i].value = i * 10;
    sw_list_add_tail(&e[i].link, &head);
  }
  int count = 0;
  sw_list_head* p;
  sw_list_for_each(p, &head) {
    EXPECT_EQ(p, &e[count].link);
    count++;
  }
  EXPECT_EQ(count, 6);

  int sum = 0;
  Entry* pos;
  sw_list_for_each_entry(pos, &head, link) sum += pos->value;
  EXPECT_EQ(sum, 150);
}

TEST(List, ForEachEntrySafeAllowsDeletingTheCursor) {
  Entry e[7];
  sw_list_head head = SW_LIST_HEAD_INIT(head);
  for (int i = 0; i < 7; i++) {
    e[i].value = i;
    sw_list_add_tail(&e[i].link, &head);
  }
  Entry* pos;
  Entry* tmp;
  sw_list_for_each_entry_safe(pos, tmp, &head, link) {
    if (pos->value % 2 == 0) sw_list_del(&pos->link);
  }
  EXPECT_EQ(Values(&head), (std::vector<int>{1, 3, 5}));

  int visited = 0;
  sw_list_for_each_entry_safe(pos, tmp, &head, link) {
    sw_list_del(&pos->link);
    visited++;
  }
  EXPECT_EQ(visited, 3);
  EXPECT_TRUE(sw_list_empty(&head));

  // On an empty list the body never runs.
  sw_list_for_each_entry_safe(pos, tmp, &head, link) ADD_FAILURE() << "body ran on empty list";
}

TEST(Compiler, ContainerOf) {
  struct Outer {
    uint32_t a;
    uint64_t b;
    sw_list_head link;
  } outer{};
  EXPECT_EQ(sw_container_of(&outer.link, Outer, link), &outer);
  EXPECT_EQ(sw_container_of(&outer.b, Outer, b), &outer);
  EXPECT_EQ(sw_container_of(&outer.a, Outer, a), &outer);
}

TEST(Compiler, ArraySize) {
  const int a[7] = {};
  const uint64_t b[1] = {};
  EXPECT_EQ(SW_ARRAY_SIZE(a), 7u);
  EXPECT_EQ(SW_ARRAY_SIZE(b), 1u);
}

TEST(Compiler, Align) {
  EXPECT_EQ(SW_ALIGN_UP(0u, 8u), 0u);
  EXPECT_EQ(SW_ALIGN_UP(1u, 8u), 8u);
  EXPECT_EQ(SW_ALIGN_UP(8u, 8u), 8u);
  EXPECT_EQ(SW_ALIGN_UP(9u, 8u), 16u);
  EXPECT_EQ(SW_ALIGN_DOWN(15u, 8u), 8u);
  EXPECT_EQ(SW_ALIGN_DOWN(16u, 8u), 16u);
  EXPECT_TRUE(SW_IS_ALIGNED(4096u, 4096u));
  EXPECT_FALSE(SW_IS_ALIGNED(4097u, 4096u));
  // A 32-bit alignment must not truncate a 64-bit address.
  const uint64_t addr = 0x123456789ABCull;
  const uint32_t page = 4096;
  EXPECT_EQ(SW_ALIGN_DOWN(addr, page), 0x123456789000ull);
  EXPECT_EQ(SW_ALIGN_UP(addr, page), 0x12345678A000ull);
  EXPECT_EQ(SW_ALIGN_UP(uint64_t{0xFFFFFFFF00000001ull}, page), 0xFFFFFFFF00001000ull);
}

TEST(Compiler, PowerOfTwo) {
  EXPECT_FALSE(sw_is_power_of_2(0));
  EXPECT_TRUE(sw_is_power_of_2(1));
  EXPECT_TRUE(sw_is_power_of_2(2));
  EXPECT_FALSE(sw_is_power_of_2(3));
  EXPECT_TRUE(sw_is_power_of_2(4096));
  EXPECT_FALSE(sw_is_power_of_2(4097));
  EXPECT_TRUE(sw_is_power_of_2(1ull << 63));
  EXPECT_FALSE(sw_is_power_of_2(~0ull));
}

TEST(Compiler, BitScans) {
  EXPECT_EQ(sw_fls64(0), 0u);
  EXPECT_EQ(sw_fls64(1), 1u);
  EXPECT_EQ(sw_fls64(0x80), 8u);
  EXPECT_EQ(sw_fls64(0x81), 8u);
  EXPECT_EQ(sw_fls64(1ull << 63), 64u);
  EXPECT_EQ(sw_fls64(~0ull), 64u);

  EXPECT_EQ(sw_ffs64(0), 0u);
  EXPECT_EQ(sw_ffs64(1), 1u);
  EXPECT_EQ(sw_ffs64(0x80), 8u);
  EXPECT_EQ(sw_ffs64(0x81), 1u);
  EXPECT_EQ(sw_ffs64(1ull << 63), 64u);

  EXPECT_EQ(sw_ilog2_u64(0), 0u);
  EXPECT_EQ(sw_ilog2_u64(1), 0u);
  EXPECT_EQ(sw_ilog2_u64(2), 1u);
  EXPECT_EQ(sw_ilog2_u64(3), 1u);
  EXPECT_EQ(sw_ilog2_u64(4096), 12u);
  EXPECT_EQ(sw_ilog2_u64(4097), 12u);
  EXPECT_EQ(sw_ilog2_u64(~0ull), 63u);
}

TEST(Compiler, MinMax) {
  EXPECT_EQ(SW_MIN(3, 5), 3);
  EXPECT_EQ(SW_MAX(3, 5), 5);
  EXPECT_EQ(SW_MIN(-1, 1), -1);
}

}  // namespace
