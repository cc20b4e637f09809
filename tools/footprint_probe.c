/*
 * footprint_probe.c -- compiled (never run) by tools/footprint.sh: each object's size, as the
 * cross toolchain's nm reports it, is the size of one control structure in this configuration.
 */
#include "heap/heap_internal.h"
#if defined(PROBE_TLSF)
#include "index/tlsf.h"
#elif defined(PROBE_SEGLIST)
#include "index/seglist.h"
#elif defined(PROBE_HALFFIT)
#include "index/halffit.h"
#else
#define FITLIST_BEST 0
#include "index/fitlist.h"
#endif

extern const char probe_index[sizeof(idx_t)];
extern const char probe_heap[sizeof(struct rt_heap) + sizeof(idx_t)];
const char probe_index[sizeof(idx_t)] = {0};
const char probe_heap[sizeof(struct rt_heap) + sizeof(idx_t)] = {0};
