#include "lib/string.h"

#include <stdint.h>

/* GCC would otherwise turn these loops back into calls to memset/memcpy,
 * which do not exist in a freestanding image. */
#if defined(__GNUC__) && !defined(__clang__)
#define SW_NO_LIBCALLS __attribute__((optimize("no-tree-loop-distribute-patterns")))
#else
#define SW_NO_LIBCALLS
#endif

/* Word accesses into byte buffers: may_alias keeps them legal under strict
 * aliasing. */
typedef uint64_t __attribute__((may_alias)) sw_word_t;
#define WORD_SIZE sizeof(sw_word_t)

static inline bool both_aligned(const void *a, const void *b) {
  return (((uintptr_t)a | (uintptr_t)b) & (WORD_SIZE - 1)) == 0;
}

SW_NO_LIBCALLS void *sw_memset(void *dst, int c, size_t n) {
  unsigned char *d = (unsigned char *)dst;
  const unsigned char byte = (unsigned char)c;

  while (n > 0 && ((uintptr_t)d & (WORD_SIZE - 1)) != 0) {
    *d++ = byte;
    n--;
  }
  if (n >= WORD_SIZE) {
    const uint64_t pattern = 0x0101010101010101ull * byte;
    sw_word_t *w = (sw_word_t *)(void *)d;
    for (; n >= WORD_SIZE; n -= WORD_SIZE)
      *w++ = pattern;
    d = (unsigned char *)w;
  }
  while (n > 0) {
    *d++ = byte;
    n--;
  }
  return dst;
}

/* No restrict here: sw_memmove also uses it for overlapping regions with
 * dst below src, where a word-wise forward copy is still correct. */
static SW_NO_LIBCALLS void copy_forward(unsigned char *d, const unsigned char *s, size_t n) {
  if (both_aligned(d, s)) {
    sw_word_t *wd = (sw_word_t *)(void *)d;
    const sw_word_t *ws = (const sw_word_t *)(const void *)s;
    for (; n >= WORD_SIZE; n -= WORD_SIZE)
      *wd++ = *ws++;
    d = (unsigned char *)wd;
    s = (const unsigned char *)ws;
  }
  while (n > 0) {
    *d++ = *s++;
    n--;
  }
}

SW_NO_LIBCALLS void *sw_memcpy(void *SW_RESTRICT dst, const void *SW_RESTRICT src, size_t n) {
  copy_forward((unsigned char *)dst, (const unsigned char *)src, n);
  return dst;
}

SW_NO_LIBCALLS void *sw_memmove(void *dst, const void *src, size_t n) {
  unsigned char *d = (unsigned char *)dst;
  const unsigned char *s = (const unsigned char *)src;

  /* Unsigned difference: a forward copy is safe unless dst starts inside
   * [src, src + n). */
  if ((uintptr_t)d - (uintptr_t)s >= n) {
    copy_forward(d, s, n);
    return dst;
  }
  while (n > 0) {
    n--;
    d[n] = s[n];
  }
  return dst;
}

SW_NO_LIBCALLS int sw_memcmp(const void *a, const void *b, size_t n) {
  const unsigned char *pa = (const unsigned char *)a;
  const unsigned char *pb = (const unsigned char *)b;

  for (size_t i = 0; i < n; i++) {
    if (pa[i] != pb[i])
      return pa[i] < pb[i] ? -1 : 1;
  }
  return 0;
}

SW_NO_LIBCALLS int sw_strcmp(const char *a, const char *b) {
  const unsigned char *pa = (const unsigned char *)a;
  const unsigned char *pb = (const unsigned char *)b;

  while (*pa != '\0' && *pa == *pb) {
    pa++;
    pb++;
  }
  if (*pa == *pb)
    return 0;
  return *pa < *pb ? -1 : 1;
}

SW_NO_LIBCALLS size_t sw_strlen(const char *s) {
  const char *p = s;

  while (*p != '\0')
    p++;
  return (size_t)(p - s);
}
