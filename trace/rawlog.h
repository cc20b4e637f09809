/* SPDX-License-Identifier: MIT */
/*
 * trace/rawlog.h -- the raw log the recorder (recorder.c) writes and record.c reads.
 *
 * One file per process image, "<dir>/raw-<pid>-<n>.log" (n makes the name unique: exec keeps the
 * pid), created with O_EXCL. A header page, then fixed-size records at offset RAW_HDR_SIZE +
 * slot * sizeof(raw_rec_t), slot = a fetch_add of the image's counter: the slot order is the
 * image's global order of calls. The file grows in windows of RAW_WINDOW bytes (ftruncate, then a
 * MAP_SHARED mapping of the window), so every record written is in the file even if the process
 * execs, calls _exit or crashes. A record's op byte is stored last (release): op 0 means a slot
 * taken but never written (the process died between the two) or the unused tail of a window.
 *
 * Order rule (what makes the log convertible to a single-threaded order): a call that creates a
 * block takes its slot after the real call returned; a free takes its slot before the real free;
 * a realloc takes one before (RAW_REALLOC_BEGIN: its free part) and one after (RAW_REALLOC_END:
 * its alloc part); realloc(NULL, n) frees nothing and takes one after (RAW_REALLOC_NEW). An
 * address freed by one thread and returned by malloc to another is therefore always freed first
 * in slot order.
 */
#ifndef RTBENCH_RAWLOG_H
#define RTBENCH_RAWLOG_H

#include <stdint.h>

#define RAW_MAGIC "RTRAWLG1"
enum {
    RAW_HDR_SIZE = 4096,
    RAW_WINDOW_RECS = 1 << 19, /* records per mapping window */
    RAW_WINDOW = 24 << 19,     /* bytes per window (12 MiB): whole pages and whole records */
    RAW_CMDLINE = 3072,        /* bytes of /proc/self/cmdline kept (NULs between arguments) */
};

typedef enum raw_op {
    RAW_NONE = 0,          /* slot never written */
    RAW_MALLOC = 1,        /* ptr = result, size = request */
    RAW_FREE = 2,          /* ptr = the argument (NULL too) */
    RAW_CALLOC = 3,        /* ptr = result, size = n * m (RAW_F_OVERFLOW: the product overflowed) */
    RAW_REALLOC_BEGIN = 4, /* ptr = the old block (or NULL), size = request */
    RAW_REALLOC_END = 5,   /* ptr = result, size = request; pairs with the thread's BEGIN */
    RAW_MEMALIGN = 6,      /* ptr = result, size = request, align = log2 alignment, sub = origin */
    RAW_REALLOC_NEW = 7,   /* realloc(NULL, size): ptr = result (no BEGIN: nothing is freed) */
} raw_op_t;

/* RAW_MEMALIGN origins. */
enum { RAW_SUB_MEMALIGN = 0, RAW_SUB_POSIX = 1, RAW_SUB_ALIGNED = 2, RAW_SUB_VALLOC = 3, RAW_SUB_PVALLOC = 4 };

/* flags */
enum {
    RAW_F_OVERFLOW = 1, /* calloc/reallocarray: n * m overflowed (size is UINT64_MAX) */
    RAW_F_BADALIGN = 2, /* posix_memalign/memalign: the alignment was not a power of two */
};

typedef struct raw_rec {
    uint8_t op; /* raw_op_t, stored last */
    uint8_t flags;
    uint8_t align; /* log2 of the alignment (RAW_MEMALIGN) */
    uint8_t sub;   /* RAW_MEMALIGN origin */
    uint32_t tid;  /* the image's small thread id, 0 for the first caller */
    uint64_t ptr;
    uint64_t size;
} raw_rec_t;

typedef struct raw_hdr {
    char magic[8];     /* RAW_MAGIC */
    uint32_t version;  /* 1 */
    uint32_t rec_size; /* sizeof(raw_rec_t) */
    uint32_t pid, ppid;
    uint64_t start_ns; /* CLOCK_REALTIME when the image made its first call: streams' order */
    uint32_t page_size;
    uint32_t forked; /* 1: a fork child of an image that was recording */
    uint32_t cmdline_len;
    char cmdline[RAW_CMDLINE];
} raw_hdr_t;

_Static_assert(sizeof(raw_rec_t) == 24, "raw record layout");
_Static_assert(sizeof(raw_hdr_t) <= RAW_HDR_SIZE, "raw header fits its page");
_Static_assert(RAW_WINDOW % 4096 == 0 && RAW_WINDOW == RAW_WINDOW_RECS * (int)sizeof(raw_rec_t),
               "windows are page aligned and hold whole records");

/* The environment: the directory for the raw logs (set by rtbench; without it the recorder only
 * forwards), and where rtbench finds the recorder when not beside itself. */
#define RAW_ENV_DIR "RTALLOC_TRACE_DIR"
#define RAW_ENV_LIB "RTALLOC_TRACE_LIB"

#endif /* RTBENCH_RAWLOG_H */
