/*
 * Bitmaps stored in uint64_t words, bit i in word i / 64 at position i % 64.
 * Operations are plain (non-atomic) read-modify-writes: callers lock. Searches
 * never look at bits at or beyond `size`, so the tail of the last word may
 * hold anything.
 */
#ifndef SMMU_VP_SW_LIB_BITMAP_H
#define SMMU_VP_SW_LIB_BITMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SW_BITS_PER_WORD 64u
#define SW_BITMAP_WORDS(nbits) (((nbits) + SW_BITS_PER_WORD - 1) / SW_BITS_PER_WORD)
#define SW_BITMAP_DECLARE(name, nbits) uint64_t name[SW_BITMAP_WORDS(nbits)]

void sw_bitmap_set_bit(uint64_t *map, size_t bit);
void sw_bitmap_clear_bit(uint64_t *map, size_t bit);
bool sw_bitmap_test_bit(const uint64_t *map, size_t bit);

/* Set or clear bits [start, start + n). */
void sw_bitmap_set(uint64_t *map, size_t start, size_t n);
void sw_bitmap_clear(uint64_t *map, size_t start, size_t n);
/* Clear all nbits (whole words). */
void sw_bitmap_zero(uint64_t *map, size_t nbits);

/* First set (zero) bit at index >= offset and < size; `size` when none. */
size_t sw_bitmap_find_next_bit(const uint64_t *map, size_t size, size_t offset);
size_t sw_bitmap_find_next_zero_bit(const uint64_t *map, size_t size, size_t offset);

/* Number of set bits among the first `size`. */
size_t sw_bitmap_weight(const uint64_t *map, size_t size);

/*
 * First run of `nr` zero bits at index >= start, below size, whose first
 * index is a multiple of align_mask + 1 (align_mask is 2^k - 1, 0 for none).
 * As Linux's bitmap_find_next_zero_area: returns an index >= size when no run
 * fits (index + nr > size); the bits are not set.
 */
size_t sw_bitmap_find_next_zero_area(const uint64_t *map, size_t size, size_t start, size_t nr,
                                     size_t align_mask);

#ifdef __cplusplus
}
#endif

#endif /* SMMU_VP_SW_LIB_BITMAP_H */
