/*
 * Circular doubly linked intrusive list, after Linux's <linux/list.h>.
 * An empty list is a head pointing at itself. Not thread-safe: callers lock.
 */
#ifndef SMMU_VP_SW_LIB_LIST_H
#define SMMU_VP_SW_LIB_LIST_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/compiler.h"

#ifdef __cplusplus
extern "C" {
#endif

struct sw_list_head {
  struct sw_list_head *next;
  struct sw_list_head *prev;
};

#define SW_LIST_HEAD_INIT(name) {&(name), &(name)}
#define SW_LIST_HEAD(name) struct sw_list_head name = SW_LIST_HEAD_INIT(name)

static inline void sw_list_init(struct sw_list_head *head) {
  head->next = head;
  head->prev = head;
}

static inline void sw_list_insert_between(struct sw_list_head *node, struct sw_list_head *prev,
                                          struct sw_list_head *next) {
  next->prev = node;
  node->next = next;
  node->prev = prev;
  prev->next = node;
}

/* Insert right after head: stack order. */
static inline void sw_list_add(struct sw_list_head *node, struct sw_list_head *head) {
  sw_list_insert_between(node, head, head->next);
}

/* Insert right before head: queue order. */
static inline void sw_list_add_tail(struct sw_list_head *node, struct sw_list_head *head) {
  sw_list_insert_between(node, head->prev, head);
}

static inline void sw_list_unlink(struct sw_list_head *entry) {
  entry->next->prev = entry->prev;
  entry->prev->next = entry->next;
}

/* The entry's pointers are cleared so a second deletion faults instead of
 * silently corrupting a list. */
static inline void sw_list_del(struct sw_list_head *entry) {
  sw_list_unlink(entry);
  entry->next = NULL;
  entry->prev = NULL;
}

/* Delete and leave the entry as an empty list, safe to delete again. */
static inline void sw_list_del_init(struct sw_list_head *entry) {
  sw_list_unlink(entry);
  sw_list_init(entry);
}

static inline void sw_list_move_tail(struct sw_list_head *entry, struct sw_list_head *head) {
  sw_list_unlink(entry);
  sw_list_add_tail(entry, head);
}

static inline bool sw_list_empty(const struct sw_list_head *head) { return head->next == head; }

static inline bool sw_list_is_singular(const struct sw_list_head *head) {
  return !sw_list_empty(head) && head->next == head->prev;
}

#define sw_list_entry(ptr, type, member) sw_container_of(ptr, type, member)
/* The list must not be empty. */
#define sw_list_first_entry(head, type, member) sw_list_entry((head)->next, type, member)
#define sw_list_last_entry(head, type, member) sw_list_entry((head)->prev, type, member)
#define sw_list_first_entry_or_null(head, type, member) \
  (sw_list_empty(head) ? NULL : sw_list_first_entry(head, type, member))

#define sw_list_for_each(pos, head) for ((pos) = (head)->next; (pos) != (head); (pos) = (pos)->next)

#define sw_list_entry_of(pos, ptr, member) sw_list_entry(ptr, __typeof__(*(pos)), member)

#define sw_list_for_each_entry(pos, head, member)                                        \
  for ((pos) = sw_list_entry_of(pos, (head)->next, member); &(pos)->member != (head); \
       (pos) = sw_list_entry_of(pos, (pos)->member.next, member))

/* Safe against removal of pos: the successor is fetched before the body runs. */
#define sw_list_for_each_entry_safe(pos, tmp, head, member)                      \
  for ((pos) = sw_list_entry_of(pos, (head)->next, member),                     \
      (tmp) = sw_list_entry_of(pos, (pos)->member.next, member);                \
       &(pos)->member != (head);                                                \
       (pos) = (tmp), (tmp) = sw_list_entry_of(tmp, (tmp)->member.next, member))

#ifdef __cplusplus
}
#endif

#endif /* SMMU_VP_SW_LIB_LIST_H */
