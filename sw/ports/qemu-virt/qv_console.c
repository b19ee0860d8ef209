/*
 * Console of the qemu-virt port: PL011 UART output (PrimeCell UART PL011 TRM
 * 3.3: DR at 0x00, FR at 0x18 with TXFF bit 5), a small printf for
 * hal_log, and power-off.
 */
#include "qv_port.h"

#include "lib/string.h"

#define UART_DR 0x00u
#define UART_FR 0x18u
#define UART_FR_TXFF (1u << 5)

/* PSCI 0.2+ function IDs (DEN0022 5.1). */
#define PSCI_SYSTEM_OFF 0x84000008ull
/* Semihosting (Arm semihosting 6.5 SYS_EXIT): ADP_Stopped_ApplicationExit
 * with the status as subcode. */
#define SEMIHOST_SYS_EXIT 0x18u
#define ADP_STOPPED_APPLICATION_EXIT 0x20026ull

static volatile uint32_t console_lock;

static void lock_console(void) {
  while (__atomic_exchange_n(&console_lock, 1u, __ATOMIC_ACQUIRE)) __asm__ volatile("yield");
}
static void unlock_console(void) { __atomic_store_n(&console_lock, 0u, __ATOMIC_RELEASE); }

static void uart_putc(char c) {
  while (hal_read32(QV_UART_BASE + UART_FR) & UART_FR_TXFF) {
  }
  hal_write32(QV_UART_BASE + UART_DR, (uint8_t)c);
}

static void uart_puts(const char *s) {
  while (*s) uart_putc(*s++);
}

/* ---- Formatting: flags - + space # 0, width and precision (or *), length
 * hh h l ll z j t, conversions d i u x X o c s p f %. */

struct out {
  char *buf;
  size_t size, len;
};

static void put(struct out *o, char c) {
  if (o->len + 1 < o->size) o->buf[o->len] = c;
  o->len++;
}

static void put_padded(struct out *o, const char *s, size_t n, int width, bool left, char pad_char,
                       const char *prefix) {
  const size_t plen = sw_strlen(prefix);
  int pad = width - (int)(n + plen);
  if (!left && pad_char == ' ')
    for (; pad > 0; pad--) put(o, ' ');
  for (size_t i = 0; i < plen; i++) put(o, prefix[i]);
  if (!left && pad_char == '0')
    for (; pad > 0; pad--) put(o, '0');
  for (size_t i = 0; i < n; i++) put(o, s[i]);
  for (; pad > 0; pad--) put(o, ' ');
}

static size_t utoa(char *tmp, uint64_t v, unsigned base, bool upper) {
  const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
  char rev[32];
  size_t n = 0;
  do {
    rev[n++] = digits[v % base];
    v /= base;
  } while (v);
  for (size_t i = 0; i < n; i++) tmp[i] = rev[n - 1 - i];
  return n;
}

/* %f: rounds to `prec` digits (at most 9); enough for stats and rates. */
static size_t ftoa(char *tmp, double v, int prec, bool *neg) {
  *neg = v < 0;
  if (*neg) v = -v;
  if (v != v) {
    sw_memcpy(tmp, "nan", 3);
    return 3;
  }
  if (v > 1.8e19) {
    sw_memcpy(tmp, "inf", 3);
    return 3;
  }
  if (prec > 9) prec = 9;
  uint64_t scale = 1;
  for (int i = 0; i < prec; i++) scale *= 10;
  double rounded = v + 0.5 / (double)scale;
  uint64_t ip = (uint64_t)rounded;
  uint64_t fp = (uint64_t)((rounded - (double)ip) * (double)scale);
  if (fp >= scale) fp = scale - 1;
  size_t n = utoa(tmp, ip, 10, false);
  if (prec > 0) {
    tmp[n++] = '.';
    char frac[32];
    size_t fn = utoa(frac, fp, 10, false);
    for (size_t i = fn; i < (size_t)prec; i++) tmp[n++] = '0';
    sw_memcpy(tmp + n, frac, fn);
    n += fn;
  }
  return n;
}

int qv_vsnprintf(char *buf, size_t size, const char *fmt, va_list ap) {
  struct out o = {buf, size, 0};
  for (const char *p = fmt; *p; p++) {
    if (*p != '%') {
      put(&o, *p);
      continue;
    }
    p++;
    bool left = false, plus = false, space = false, alt = false, zero = false;
    for (;; p++) {
      if (*p == '-') left = true;
      else if (*p == '+') plus = true;
      else if (*p == ' ') space = true;
      else if (*p == '#') alt = true;
      else if (*p == '0') zero = true;
      else break;
    }
    int width = 0, prec = -1;
    if (*p == '*') {
      width = va_arg(ap, int);
      if (width < 0) {
        left = true;
        width = -width;
      }
      p++;
    } else {
      while (*p >= '0' && *p <= '9') width = width * 10 + (*p++ - '0');
    }
    if (*p == '.') {
      p++;
      prec = 0;
      if (*p == '*') {
        prec = va_arg(ap, int);
        p++;
      } else {
        while (*p >= '0' && *p <= '9') prec = prec * 10 + (*p++ - '0');
      }
    }
    int lng = 0; /* 0 int, 1 long, 2 long long, 3 size_t/intmax/ptrdiff */
    if (*p == 'h') {
      p++;
      if (*p == 'h') p++;
    } else if (*p == 'l') {
      p++;
      lng = 1;
      if (*p == 'l') {
        p++;
        lng = 2;
      }
    } else if (*p == 'z' || *p == 'j' || *p == 't') {
      p++;
      lng = 3;
    }
    const char pad_char = (zero && !left) ? '0' : ' ';
    char tmp[48];
    size_t n;
    switch (*p) {
      case 'd':
      case 'i': {
        int64_t v = lng ? va_arg(ap, int64_t) : (int64_t)va_arg(ap, int);
        const uint64_t mag = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
        n = utoa(tmp, mag, 10, false);
        put_padded(&o, tmp, n, width, left, pad_char, v < 0 ? "-" : plus ? "+" : space ? " " : "");
        break;
      }
      case 'u':
      case 'x':
      case 'X':
      case 'o': {
        uint64_t v = lng ? va_arg(ap, uint64_t) : (uint64_t)va_arg(ap, unsigned);
        const unsigned base = *p == 'u' ? 10 : *p == 'o' ? 8 : 16;
        n = utoa(tmp, v, base, *p == 'X');
        const char *prefix = (alt && v && base == 16) ? (*p == 'X' ? "0X" : "0x") : (alt && base == 8) ? "0" : "";
        put_padded(&o, tmp, n, width, left, pad_char, prefix);
        break;
      }
      case 'p': {
        n = utoa(tmp, (uint64_t)(uintptr_t)va_arg(ap, void *), 16, false);
        put_padded(&o, tmp, n, width, left, ' ', "0x");
        break;
      }
      case 'c':
        tmp[0] = (char)va_arg(ap, int);
        put_padded(&o, tmp, 1, width, left, ' ', "");
        break;
      case 's': {
        const char *s = va_arg(ap, const char *);
        if (!s) s = "(null)";
        size_t len = sw_strlen(s);
        if (prec >= 0 && (size_t)prec < len) len = (size_t)prec;
        put_padded(&o, s, len, width, left, ' ', "");
        break;
      }
      case 'f':
      case 'F': {
        bool neg;
        n = ftoa(tmp, va_arg(ap, double), prec < 0 ? 6 : prec, &neg);
        put_padded(&o, tmp, n, width, left, pad_char, neg ? "-" : plus ? "+" : space ? " " : "");
        break;
      }
      case '%':
        put(&o, '%');
        break;
      case '\0':
        p--;
        break;
      default: /* unknown conversion: printed as is */
        put(&o, '%');
        put(&o, *p);
        break;
    }
  }
  if (o.size) o.buf[o.len < o.size ? o.len : o.size - 1] = '\0';
  return (int)o.len;
}

int qv_snprintf(char *buf, size_t size, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  const int n = qv_vsnprintf(buf, size, fmt, ap);
  va_end(ap);
  return n;
}

static void print_line(const char *prefix, const char *fmt, va_list ap) {
  char line[512];
  qv_vsnprintf(line, sizeof line, fmt, ap);
  lock_console();
  uart_puts(prefix);
  uart_puts(line);
  uart_putc('\n');
  unlock_console();
}

void qv_printf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  print_line("", fmt, ap);
  va_end(ap);
}

/* INFO and above reach the UART; TRACE and DEBUG would drown it. */
#ifndef QV_LOG_LEVEL
#define QV_LOG_LEVEL HAL_LOG_INFO
#endif

void hal_vlog(enum hal_log_level level, const char *fmt, va_list ap) {
  if ((int)level < QV_LOG_LEVEL) return;
  static const char *const names[] = {"trace", "debug", "info", "warn", "error"};
  const uint64_t us = hal_now_ns() / 1000;
  char prefix[48];
  qv_snprintf(prefix, sizeof prefix, "[%4llu.%06llu] cpu%u %-5s ", (unsigned long long)(us / 1000000),
              (unsigned long long)(us % 1000000), hal_cpu_id(), names[(unsigned)level <= 4 ? level : 4]);
  print_line(prefix, fmt, ap);
}

void hal_log(enum hal_log_level level, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  hal_vlog(level, fmt, ap);
  va_end(ap);
}

/* Set by the exception handler when the semihosting trap was undefined. */
volatile uint32_t qv_semihosting_absent;

_Noreturn void qv_poweroff(int status) {
  const uint64_t block[2] = {ADP_STOPPED_APPLICATION_EXIT, (uint64_t)(int64_t)status};
  __asm__ volatile("dsb sy" ::: "memory");
  qv_semihost(SEMIHOST_SYS_EXIT, (uint64_t)(uintptr_t)block);
  /* Still here: no semihosting. The status is in the UART output only. */
  qv_hvc(PSCI_SYSTEM_OFF, 0, 0, 0);
  for (;;) __asm__ volatile("wfi");
}

_Noreturn void qv_fatal(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  print_line("FATAL: ", fmt, ap);
  va_end(ap);
  qv_printf("RESULT: FAIL (fatal error)");
  qv_poweroff(2);
}
