/* The heap with a best-fit free list. See index/fitlist.h. */
#define FITLIST_BEST 1
#include "index/fitlist.h"
#define RT_BACKEND bestfit
#define RT_BACKEND_INDEX RT_INDEX_BESTFIT
#include "heap/facade.inc"
