/* The heap with a first-fit free list. See index/fitlist.h. */
#define FITLIST_BEST 0
#include "index/fitlist.h"
#define RT_BACKEND firstfit
#define RT_BACKEND_INDEX RT_INDEX_FIRSTFIT
#include "heap/facade.inc"
