/* SPDX-License-Identifier: MIT */
/*
 * ports/common/format.c -- the port's printf formatter: a subset of C's, with no libc and no
 * floating point, enough for the tests and the studies' CSV lines.
 *
 * Supported: flags '-' '0' '+' ' ' '#'; width and precision as digits or '*'; length modifiers
 * hh h l ll z j t (L and q accepted, treated as ll); conversions d i u o x X c s p %. Anything else
 * prints '?' (and consumes no argument, so an unsupported conversion never reads a wrong one
 * further on -- GCC's -Wformat flags such a call at compile time anyway).
 */
#include "port.h"

typedef struct fmt_out {
    void (*out)(void *context, char c);
    void *context;
    int count;
} fmt_out_t;

static void emit(fmt_out_t *o, char c)
{
    o->out(o->context, c);
    o->count++;
}

static void emit_repeat(fmt_out_t *o, char c, int n)
{
    for (; n > 0; n--) {
        emit(o, c);
    }
}

enum { F_LEFT = 1, F_ZERO = 2, F_PLUS = 4, F_SPACE = 8, F_ALT = 16 };

/* One integer conversion: magnitude `v`, sign, base, flags, width, precision (-1 if none). */
static void emit_integer(fmt_out_t *o, unsigned long long v, bool negative, unsigned base, bool upper, unsigned flags,
                         int width, int precision)
{
    char digits[24]; /* 2^64 in octal: 22 digits */
    int nd = 0;
    const char *set = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    while (v != 0u) {
        digits[nd++] = set[v % base];
        v /= base;
    }
    if (precision < 0) {
        precision = 1;
    } else {
        flags &= ~(unsigned)F_ZERO; /* C: a precision cancels the 0 flag */
    }
    int zeros = precision > nd ? precision - nd : 0;
    const char *prefix = "";
    if (negative) {
        prefix = "-";
    } else if ((flags & F_PLUS) != 0u) {
        prefix = "+";
    } else if ((flags & F_SPACE) != 0u) {
        prefix = " ";
    }
    if ((flags & F_ALT) != 0u) {
        if (base == 16u && nd > 0) {
            prefix = upper ? "0X" : "0x";
        } else if (base == 8u && zeros == 0) {
            zeros = 1; /* '#o': the first digit is a 0 */
        }
    }
    int plen = 0;
    while (prefix[plen] != '\0') {
        plen++;
    }
    int len = plen + zeros + nd;
    int pad = width > len ? width - len : 0;
    if ((flags & F_LEFT) == 0u && (flags & F_ZERO) == 0u) {
        emit_repeat(o, ' ', pad);
    }
    for (int i = 0; i < plen; i++) {
        emit(o, prefix[i]);
    }
    if ((flags & F_LEFT) == 0u && (flags & F_ZERO) != 0u) {
        emit_repeat(o, '0', pad);
    }
    emit_repeat(o, '0', zeros);
    while (nd > 0) {
        emit(o, digits[--nd]);
    }
    if ((flags & F_LEFT) != 0u) {
        emit_repeat(o, ' ', pad);
    }
}

int port_vformat(void (*out)(void *context, char c), void *context, const char *fmt, va_list ap)
{
    fmt_out_t o = {out, context, 0};
    for (const char *f = fmt; *f != '\0'; f++) {
        if (*f != '%') {
            emit(&o, *f);
            continue;
        }
        f++;
        unsigned flags = 0;
        for (;; f++) {
            if (*f == '-') {
                flags |= F_LEFT;
            } else if (*f == '0') {
                flags |= F_ZERO;
            } else if (*f == '+') {
                flags |= F_PLUS;
            } else if (*f == ' ') {
                flags |= F_SPACE;
            } else if (*f == '#') {
                flags |= F_ALT;
            } else {
                break;
            }
        }
        int width = 0;
        if (*f == '*') {
            width = va_arg(ap, int);
            if (width < 0) {
                flags |= F_LEFT;
                width = -width;
            }
            f++;
        } else {
            while (*f >= '0' && *f <= '9') {
                width = width * 10 + (*f++ - '0');
            }
        }
        int precision = -1;
        if (*f == '.') {
            f++;
            precision = 0;
            if (*f == '*') {
                precision = va_arg(ap, int);
                f++;
            } else {
                while (*f >= '0' && *f <= '9') {
                    precision = precision * 10 + (*f++ - '0');
                }
            }
        }
        /* length: 0 int, 1 char, 2 short, 3 long, 4 long long, 5 size_t, 6 intmax_t, 7 ptrdiff_t */
        int length = 0;
        if (*f == 'h') {
            length = f[1] == 'h' ? 1 : 2;
            f += f[1] == 'h' ? 2 : 1;
        } else if (*f == 'l') {
            length = f[1] == 'l' ? 4 : 3;
            f += f[1] == 'l' ? 2 : 1;
        } else if (*f == 'L' || *f == 'q') {
            length = 4;
            f++;
        } else if (*f == 'z') {
            length = 5;
            f++;
        } else if (*f == 'j') {
            length = 6;
            f++;
        } else if (*f == 't') {
            length = 7;
            f++;
        }
        char conv = *f;
        if (conv == '\0') {
            break;
        }
        switch (conv) {
        case 'd':
        case 'i': {
            long long v;
            switch (length) {
            case 1: v = (signed char)va_arg(ap, int); break;
            case 2: v = (short)va_arg(ap, int); break;
            case 3: v = va_arg(ap, long); break;
            case 4: v = va_arg(ap, long long); break;
            case 5: v = (long long)va_arg(ap, size_t); break; /* ssize_t: same width */
            case 6: v = (long long)va_arg(ap, intmax_t); break;
            case 7: v = va_arg(ap, ptrdiff_t); break;
            default: v = va_arg(ap, int); break;
            }
            unsigned long long m = v < 0 ? 0u - (unsigned long long)v : (unsigned long long)v;
            emit_integer(&o, m, v < 0, 10u, false, flags, width, precision);
            break;
        }
        case 'u':
        case 'o':
        case 'x':
        case 'X': {
            unsigned long long v;
            switch (length) {
            case 1: v = (unsigned char)va_arg(ap, unsigned); break;
            case 2: v = (unsigned short)va_arg(ap, unsigned); break;
            case 3: v = va_arg(ap, unsigned long); break;
            case 4: v = va_arg(ap, unsigned long long); break;
            case 5: v = va_arg(ap, size_t); break;
            case 6: v = (unsigned long long)va_arg(ap, uintmax_t); break;
            case 7: v = (unsigned long long)va_arg(ap, ptrdiff_t); break;
            default: v = va_arg(ap, unsigned); break;
            }
            unsigned base = conv == 'u' ? 10u : conv == 'o' ? 8u : 16u;
            emit_integer(&o, v, false, base, conv == 'X', flags & ~(unsigned)(F_PLUS | F_SPACE), width, precision);
            break;
        }
        case 'p': {
            uintptr_t v = (uintptr_t)va_arg(ap, void *);
            emit_integer(&o, v, false, 16u, false, F_ALT | (flags & F_LEFT), width, precision);
            break;
        }
        case 'c': {
            char c = (char)va_arg(ap, int);
            if ((flags & F_LEFT) == 0u) {
                emit_repeat(&o, ' ', width - 1);
            }
            emit(&o, c);
            if ((flags & F_LEFT) != 0u) {
                emit_repeat(&o, ' ', width - 1);
            }
            break;
        }
        case 's': {
            const char *s = va_arg(ap, const char *);
            if (s == NULL) {
                s = "(null)";
            }
            int n = 0;
            while (s[n] != '\0' && (precision < 0 || n < precision)) {
                n++;
            }
            if ((flags & F_LEFT) == 0u) {
                emit_repeat(&o, ' ', width - n);
            }
            for (int i = 0; i < n; i++) {
                emit(&o, s[i]);
            }
            if ((flags & F_LEFT) != 0u) {
                emit_repeat(&o, ' ', width - n);
            }
            break;
        }
        case '%': emit(&o, '%'); break;
        default: emit(&o, '?'); break;
        }
    }
    return o.count;
}

/* --- snprintf ---------------------------------------------------------------------------------- */

typedef struct sn_out {
    char *buf;
    size_t size;
    size_t at;
} sn_out_t;

static void sn_put(void *context, char c)
{
    sn_out_t *s = context;
    if (s->at + 1u < s->size) {
        s->buf[s->at] = c;
    }
    s->at++;
}

int port_vsnprintf(char *buf, size_t n, const char *fmt, va_list ap)
{
    sn_out_t s = {buf, n, 0};
    int count = port_vformat(sn_put, &s, fmt, ap);
    if (n > 0u) {
        buf[s.at < n ? s.at : n - 1u] = '\0';
    }
    return count;
}

int port_snprintf(char *buf, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int count = port_vsnprintf(buf, n, fmt, ap);
    va_end(ap);
    return count;
}
