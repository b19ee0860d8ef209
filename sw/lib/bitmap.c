#include "lib/bitmap.h"

#define WORD_OF(bit) ((bit) / SW_BITS_PER_WORD)
#define MASK_OF(bit) (1ull << ((bit) % SW_BITS_PER_WORD))
#define ALL_ONES (~0ull)

void sw_bitmap_set_bit(uint64_t *map, size_t bit) { map[WORD_OF(bit)] |= MASK_OF(bit); }

void sw_bitmap_clear_bit(uint64_t *map, size_t bit) { map[WORD_OF(bit)] &= ~MASK_OF(bit); }

bool sw_bitmap_test_bit(const uint64_t *map, size_t bit) {
  return (map[WORD_OF(bit)] & MASK_OF(bit)) != 0;
}

/* Bits at and above position `bit` of a word. */
static inline uint64_t mask_from(size_t bit) { return ALL_ONES << (bit % SW_BITS_PER_WORD); }

/* Bits below the exclusive end `end`; a full word when end is word-aligned. */
static inline uint64_t mask_below(size_t end) {
  return ALL_ONES >> ((SW_BITS_PER_WORD - end % SW_BITS_PER_WORD) % SW_BITS_PER_WORD);
}

static void update_range(uint64_t *map, size_t start, size_t n, bool set) {
  if (n == 0)
    return;
  const size_t end = start + n;
  size_t w = WORD_OF(start);
  const size_t last = WORD_OF(end - 1);
  uint64_t mask = mask_from(start);

  for (; w <= last; w++) {
    if (w == last)
      mask &= mask_below(end);
    if (set)
      map[w] |= mask;
    else
      map[w] &= ~mask;
    mask = ALL_ONES;
  }
}

void sw_bitmap_set(uint64_t *map, size_t start, size_t n) { update_range(map, start, n, true); }

void sw_bitmap_clear(uint64_t *map, size_t start, size_t n) { update_range(map, start, n, false); }

void sw_bitmap_zero(uint64_t *map, size_t nbits) {
  for (size_t w = 0; w < SW_BITMAP_WORDS(nbits); w++)
    map[w] = 0;
}

/* Zero searches look for set bits in the complemented words. */
static size_t find_next(const uint64_t *map, size_t size, size_t offset, uint64_t invert) {
  if (offset >= size)
    return size;
  size_t w = WORD_OF(offset);
  uint64_t word = (map[w] ^ invert) & mask_from(offset);

  while (word == 0) {
    w++;
    if (w * SW_BITS_PER_WORD >= size)
      return size;
    word = map[w] ^ invert;
  }
  const size_t found = w * SW_BITS_PER_WORD + (size_t)__builtin_ctzll(word);
  return found < size ? found : size;
}

size_t sw_bitmap_find_next_bit(const uint64_t *map, size_t size, size_t offset) {
  return find_next(map, size, offset, 0);
}

size_t sw_bitmap_find_next_zero_bit(const uint64_t *map, size_t size, size_t offset) {
  return find_next(map, size, offset, ALL_ONES);
}

size_t sw_bitmap_weight(const uint64_t *map, size_t size) {
  const size_t full = size / SW_BITS_PER_WORD;
  size_t count = 0;

  for (size_t w = 0; w < full; w++)
    count += (size_t)__builtin_popcountll(map[w]);
  if (size % SW_BITS_PER_WORD != 0)
    count += (size_t)__builtin_popcountll(map[full] & mask_below(size));
  return count;
}

size_t sw_bitmap_find_next_zero_area(const uint64_t *map, size_t size, size_t start, size_t nr,
                                     size_t align_mask) {
  for (;;) {
    size_t index = sw_bitmap_find_next_zero_bit(map, size, start);
    index = (index + align_mask) & ~align_mask;
    if (index > size || nr > size - index) {
      /* Report where the run would have ended, as Linux does; saturate
       * rather than wrap to a small, valid-looking index. */
      return nr > SIZE_MAX - index ? SIZE_MAX : index + nr;
    }
    const size_t end = index + nr;
    const size_t busy = sw_bitmap_find_next_bit(map, end, index);
    if (busy >= end)
      return index;
    start = busy + 1;
  }
}
