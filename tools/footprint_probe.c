/* SPDX-License-Identifier: MIT */
/*
 * footprint_probe.c -- compiled (never run) by tools/footprint.sh: each object's size, as the
 * cross toolchain's nm reports it, is the size of one control structure in this configuration.
 *
 * The probe includes the backend's own source, so the sizes are the backend's own types exactly
 * (padding included): -DPROBE_BACKEND='"heap/heap_tlsf.c"' gives probe_index = sizeof(idx_t),
 * the index alone, and probe_control = sizeof(heap_full), the whole control block the facade lays
 * at the start of the buffer (rt_heap_control_size()); -DPROBE_BUDDY gives probe_control =
 * sizeof(struct rt_buddy) (rt_buddy_control_size(); its table of one byte per 32-byte unit follows
 * it in the buffer and is not counted).
 */
#if defined(PROBE_BUDDY)
#include "buddy/buddy.c"
extern const char probe_control[sizeof(struct rt_buddy)];
const char probe_control[sizeof(struct rt_buddy)] = {0};
#elif defined(PROBE_BACKEND)
#include PROBE_BACKEND
extern const char probe_index[sizeof(idx_t)];
extern const char probe_control[sizeof(heap_full)];
const char probe_index[sizeof(idx_t)] = {0};
const char probe_control[sizeof(heap_full)] = {0};
#else
#error "define PROBE_BACKEND (a heap backend's source, e.g. \"heap/heap_tlsf.c\") or PROBE_BUDDY"
#endif
