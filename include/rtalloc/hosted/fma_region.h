/* SPDX-License-Identifier: MIT */
/*
 * rtalloc/hosted/fma_region.h -- FMA regions: the 1998 article's interface (fmainit, fmadown,
 * fmaalloc, fmafree) over the freestanding FMA core (rtalloc/fma.h), as a POSIX driver: hosted
 * (shared memory, mmap, a process-shared mutex). Link with rtalloc::drivers (pkg-config:
 * rtalloc-drivers). rtalloc/fma_region.h forwards here.
 *
 * A region is one contiguous mapping: a small header, then one FMA instance (control block, page
 * table, pages) over the rest.
 *
 *   [ header: magic, version, state, address, size, attach table, robust mutex ][ FMA ......... ]
 *   ^ base (page aligned)                                                ^ base + RT_FMA_REGION_HEADER
 *
 * Kinds (flags):
 *   RT_FMA_PRIVATE  anonymous memory of this process (or a buffer the caller hands in); requests
 *                   serialised by a process-local mutex, so threads may share it.
 *   RT_FMA_SHARED   a POSIX shared-memory object named after the key, mapped at the SAME address
 *                   in every process that attaches, so pointers -- and C++ objects with virtual
 *                   functions, whose vtable pointers are absolute addresses -- mean the same in all
 *                   of them (the article's requirement: for vtables the program image must be
 *                   loaded at the same address too, i.e. a non-PIE executable or ASLR off).
 *                   Requests are serialised by a robust, process-shared, recursive mutex in the
 *                   header. The object is removed (shm_unlink) when the last process detaches.
 *   RT_FMA_PINNED   the mapping is locked in memory (mlock) in every process that maps it. When
 *                   mlock fails (EPERM without privilege, ENOMEM over RLIMIT_MEMLOCK, EAGAIN) the
 *                   open fails with that errno and rt_fma_region_error() says why; nothing is
 *                   left behind. A region is never silently left unpinned.
 *   RT_FMA_BSD44    passed to the core: the McKusick-Karels baseline instead of FMA.
 *   RT_FMA_EXCL     with create: fail with EEXIST instead of attaching to an existing region.
 *
 * Keys. The handle API takes a string key: the shared-memory object is "/rtalloc-fma-<key>"
 * (1..RT_FMA_KEY_MAX-1 characters of [A-Za-z0-9._-]). The article's char key (its C++ policy,
 * and fmainit through RT_FMA_KEY(c) in the flags) maps to the string key "u<euid>-k<c>", so two
 * users' char keys never collide (rt_fma_char_key).
 *
 * Same address. The creator maps the object at config->address when given (and fails with
 * EADDRINUSE if that range is occupied), otherwise at a default address derived from the key in
 * a part of the address space that loaders and mmap leave alone (and anywhere if that is taken),
 * and records the address in the header. Every attacher maps it at that address with
 * MAP_FIXED_NOREPLACE and fails cleanly (EADDRINUSE, nothing mapped) if the range is occupied in
 * its process. A region cannot be shared between 32-bit and 64-bit processes (EPROTO).
 *
 * Processes. Each process that opens the region (or inherits it over fork) holds one slot of the
 * header's attach table (RT_FMA_REGION_MAX_PROCS slots: pid and start time). A forked child
 * inherits every shared region of its parent as an attachment of its own: it is entered in the
 * table at fork (pthread_atfork) and detaches with rt_fma_region_down on the inherited handle.
 * Crashed processes: a slot whose process no longer exists (kill(pid, 0) fails with ESRCH, the
 * process is a zombie, or its start time differs: the pid was reused) is dropped whenever a
 * process attaches, detaches or recovers the lock, so a crashed attacher never keeps the object
 * alive: the last live process to detach removes it. Assumes one pid namespace.
 *
 * Crash while holding the lock. A process may die at any instruction of any request. The FMA
 * instance of a shared region keeps an undo journal (RT_FMA_JOURNAL, rtalloc/fma.h): every store
 * to its metadata is logged first, and each operation (each page of a run of pages) commits with
 * one store. The process that next takes the mutex gets EOWNERDEAD and runs rt_fma_recover: the
 * interrupted operation is rolled back (a free of a run of pages is rolled forward), the instance
 * is checked, pthread_mutex_consistent, the request goes on and info.recoveries counts it. Every
 * block of every surviving process stays handed out and intact; the dead process's blocks stay
 * handed out (nobody frees them). Only a region whose journal or metadata is damaged beyond an
 * interrupted operation (a wild write into the metadata) is marked broken: the handler gets
 * RT_ERR_CORRUPTED with size = the bytes in use that are lost (info.lost_blocks/lost_bytes) and
 * the mutex is left unrecoverable, so every later request of every process fails (NULL /
 * reported) instead of working on a torn page table. rt_fma_region_down still detaches (and
 * removes the last).
 * Where the kernel keeps no robust futex list for the creator (get_robust_list fails or is
 * empty: qemu-user, very old kernels) it falls back to a plain process-shared mutex and
 * info.robust is false: a holder that dies then leaves the region locked. (Likewise a process
 * without the list that attaches to a robust region is not cleaned up after if it dies.)
 *
 * Errors. Opening fails with NULL and errno set (and a sentence in rt_fma_region_error()); bad
 * pointers go to the process's handler (rt_fma_region_set_handler), which is per process and
 * per handle: no function pointer is ever stored in shared memory for another process to call.
 * The handler runs after the region's lock is released (it may call the region again); without
 * one, errors are only counted (stats.errors).
 *
 * Time: alloc/free are the core's O(1) plus one uncontended mutex lock/unlock (an atomic RMW
 * each; with contention, the wait of a POSIX mutex: no bound beyond the holders' critical
 * sections, each O(1)). Opening, down and the first touch of fresh pages are system calls and
 * page faults: do them outside time-critical code (or pin the region).
 * Thread safety: every function may be called from any thread, except that down must not race
 * with requests on the same handle. Not async-signal-safe. Alignment: what rt_fma_malloc
 * returns (at least 16 bytes).
 */
#ifndef RTALLOC_FMA_REGION_H
#define RTALLOC_FMA_REGION_H

#include "../common.h"
#include "../fma.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- flags ------------------------------------------------------------------------------- */
#define RT_FMA_PRIVATE 0x0000u
#define RT_FMA_CORE_FLAGS 0x00ffu /* bits handed to rt_fma_create_ex (RT_FMA_BSD44, ...) */
#define RT_FMA_SHARED 0x0100u
#define RT_FMA_PINNED 0x0200u
#define RT_FMA_EXCL 0x0400u
/* The article's char key, carried in the flags of fmainit (bits 16..23). */
#define RT_FMA_KEY(c) ((unsigned)(unsigned char)(c) << 16)
#define RT_FMA_KEY_MASK 0x00ff0000u

#define RT_FMA_KEY_MAX 200u         /* string keys: fewer characters than this */
#define RT_FMA_REGION_MAX_PROCS 64u /* processes attached to one shared region at once */
#define RT_FMA_REGION_HEADER 4096u  /* bytes before the FMA instance (the header, padded) */

typedef struct rt_fma_region rt_fma_region_t;

typedef struct rt_fma_region_config {
    size_t size;        /* bytes of the whole mapping, header and FMA control block included;
                        rounded up to the system page. Attaching: ignored (the segment's size) */
    unsigned flags;     /* RT_FMA_PRIVATE or RT_FMA_SHARED, | RT_FMA_PINNED, RT_FMA_BSD44, EXCL */
    const char *key;    /* shared: the string key (see above); private: ignored */
    bool create;        /* create the region if it does not exist (private: always) */
    void *address;      /* creator: map exactly here (page aligned) or fail; NULL: default */
    void *buffer;       /* private only: manage [buffer, buffer + size) instead of mapping
                        (page aligned); the caller keeps ownership */
    unsigned page_log2; /* FMA page size, 0 = 12 (4 KiB) */
    unsigned mode;      /* permissions of a new shared object, 0 = 0600 */
} rt_fma_region_config_t;

/* Opens a region: creates a private one, or creates / attaches a shared one. Returns NULL with
 * errno set: EINVAL (bad config, key or size; too small for rt_fma_min_buffer), ENOENT (shared,
 * !create, no such region), EEXIST (RT_FMA_EXCL and it exists), EADDRINUSE (the address is
 * occupied in this process, or this process already maps another region there), EPROTO (not a
 * region of this library and ABI), ETIMEDOUT (its creator did not finish initialising it within
 * 5 s: crashed?), EUSERS (attach table full), EPERM/ENOMEM/EAGAIN (mlock for RT_FMA_PINNED), or
 * the errno of shm_open/ftruncate/mmap. Opening a shared key this process has open already
 * returns the same handle with a reference more (each open needs its down). */
rt_fma_region_t *rt_fma_region_open(const rt_fma_region_config_t *config);

/* The article's fmainit as a handle: rt_fma_region_open with only these fields set. */
rt_fma_region_t *rt_fma_region_init(size_t size, unsigned flags, const char *key, bool create);

/* Drops one reference; the last one of this process detaches: unlocks, unmaps and frees the
 * handle, and if no other live process is attached, removes the shared object. Returns 0, or -1
 * with errno (EINVAL for NULL; the errno of munmap/shm_unlink, the handle is freed anyway).
 * Pointers into the region are invalid afterwards. */
int rt_fma_region_down(rt_fma_region_t *region);

/* The core's requests under the region's lock. NULL when out of memory, for NULL regions, and
 * when the region is broken. free(NULL) does nothing; bad pointers are reported. */
void *rt_fma_region_alloc(rt_fma_region_t *region, size_t size);
void rt_fma_region_free(rt_fma_region_t *region, void *ptr);
void *rt_fma_region_memalign(rt_fma_region_t *region, size_t alignment, size_t size);
void *rt_fma_region_calloc(rt_fma_region_t *region, size_t count, size_t size);
void *rt_fma_region_realloc(rt_fma_region_t *region, void *ptr, size_t size);
size_t rt_fma_region_usable_size(rt_fma_region_t *region, void *ptr);
void rt_fma_region_stats(rt_fma_region_t *region, rt_stats_t *stats);
/* rt_fma_check under the lock; false for a broken region. */
bool rt_fma_region_check(rt_fma_region_t *region);

/* true iff ptr lies in the region's mapping (no lock, O(1)). */
bool rt_fma_region_contains(const rt_fma_region_t *region, const void *ptr);

/* The process's handler for this handle (NULL: count only). */
void rt_fma_region_set_handler(rt_fma_region_t *region, rt_error_handler_t handler, void *context);

/* Holds the region's (recursive) lock across several requests of this thread. lock returns 0,
 * or an errno (ENOTRECOVERABLE for a broken region: then do not call unlock). */
int rt_fma_region_lock(rt_fma_region_t *region);
void rt_fma_region_unlock(rt_fma_region_t *region);

typedef struct {          /* (no tag: rt_fma_region_info is the function) */
    void *base;           /* the mapping (the same in every process of a shared region) */
    size_t size;          /* bytes of the mapping */
    rt_fma_t *fma;        /* the core instance (use it only under rt_fma_region_lock) */
    unsigned flags;       /* the region's flags (as created) */
    const char *name;     /* shared-memory object name, "" for private regions */
    bool creator;         /* this process created it */
    bool broken;          /* found inconsistent after a crash: every request fails */
    unsigned attached;    /* live processes attached (dead ones dropped first) */
    bool robust;          /* shared: the lock is a robust mutex (see "Crash while holding")*/
    uint64_t recoveries;  /* lock owners found dead, their operation rolled back */
    uint64_t lost_blocks; /* broken: blocks in use when it broke (all lost), and their bytes */
    uint64_t lost_bytes;
    int refs; /* this process's references */
} rt_fma_region_info_t;

/* Fills *info (takes the lock to count the attached processes). */
void rt_fma_region_info(rt_fma_region_t *region, rt_fma_region_info_t *info);

/* A sentence on this thread's last failed open (or down), "" if none. */
const char *rt_fma_region_error(void);

/* The shared-memory object name of `key` into buf; false if the key is invalid or buf small. */
bool rt_fma_region_name(const char *key, char *buf, size_t size);

/* The article's char key as a string key "u<euid>-k<c>" in buf; returns buf. */
#define RT_FMA_CHAR_KEY_MAX 32u
const char *rt_fma_char_key(char key, char buf[RT_FMA_CHAR_KEY_MAX]);

/* ---- the article's interface over the process's default region --------------------------- */

/* Creates (create != 0) or attaches the default region: size in bytes, flags as above with the
 * char key in RT_FMA_KEY(c) for shared regions (RT_FMA_KEY(0) when absent). Returns 0, or -1
 * with errno (EALREADY if this process has a default region already; else as
 * rt_fma_region_open). A forked child inherits its parent's default region. */
int fmainit(size_t size, int flags, char create);
/* Detaches the default region (removing it if last). 0, or -1 with errno (ENXIO: none). */
int fmadown(void);
/* fmaalloc/fmafree: rt_fma_region_alloc/free on the default region; NULL without one. */
void *fmaalloc(size_t size);
void fmafree(void *ptr);
/* The default region's handle, or NULL. */
rt_fma_region_t *fmaregion(void);

#ifdef __cplusplus
}
#endif

#endif /* RTALLOC_FMA_REGION_H */
