/*
 * Memory and string helpers for sw/, which has no libc. Same contracts as the
 * C library functions of the same name without the sw_ prefix.
 */
#ifndef SMMU_VP_SW_LIB_STRING_H
#define SMMU_VP_SW_LIB_STRING_H

#include <stddef.h>

#include "lib/compiler.h"

#ifdef __cplusplus
extern "C" {
#endif

void *sw_memset(void *dst, int c, size_t n);
void *sw_memcpy(void *SW_RESTRICT dst, const void *SW_RESTRICT src, size_t n);
/* Overlapping regions allowed. */
void *sw_memmove(void *dst, const void *src, size_t n);
/* Bytes compare as unsigned char. */
int sw_memcmp(const void *a, const void *b, size_t n);
int sw_strcmp(const char *a, const char *b);
size_t sw_strlen(const char *s);

#ifdef __cplusplus
}
#endif

#endif /* SMMU_VP_SW_LIB_STRING_H */
