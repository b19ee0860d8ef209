/*
 * The four functions GCC may call on its own even in a freestanding image
 * (struct copies and zeroing; GCC manual, "C Language Standards"), on sw/lib.
 */
#include <stddef.h>

#include "lib/string.h"

void *memcpy(void *restrict dst, const void *restrict src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);

void *memcpy(void *restrict dst, const void *restrict src, size_t n) { return sw_memcpy(dst, src, n); }
void *memmove(void *dst, const void *src, size_t n) { return sw_memmove(dst, src, n); }
void *memset(void *dst, int c, size_t n) { return sw_memset(dst, c, n); }
int memcmp(const void *a, const void *b, size_t n) { return sw_memcmp(a, b, n); }
