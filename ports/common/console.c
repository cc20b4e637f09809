/* SPDX-License-Identifier: MIT */
/*
 * ports/common/console.c -- text to the host over semihosting: a line buffer flushed with one
 * SYS_WRITE0 per line (or when full), and the printf family on top of port_vformat.
 */
#include "port_internal.h"

#define LINE_BUFFER 256u

static char line[LINE_BUFFER + 1u]; /* + the terminating NUL SYS_WRITE0 needs */
static size_t line_used;

void port_flush(void)
{
    if (line_used == 0u) {
        return;
    }
    line[line_used] = '\0';
    (void)port_arch_semihost(PORT_SYS_WRITE0, (uintptr_t)line);
    line_used = 0;
}

void port_putc(char c)
{
    if (c == '\0') {
        return; /* SYS_WRITE0 would end the string there */
    }
    line[line_used++] = c;
    if (c == '\n' || line_used == LINE_BUFFER) {
        port_flush();
    }
}

void port_puts(const char *s)
{
    while (*s != '\0') {
        port_putc(*s++);
    }
}

static void console_put(void *context, char c)
{
    (void)context;
    port_putc(c);
}

int port_vprintf(const char *fmt, va_list ap) { return port_vformat(console_put, NULL, fmt, ap); }

int port_printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = port_vprintf(fmt, ap);
    va_end(ap);
    return n;
}
