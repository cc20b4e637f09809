/* The heap with the half-fit index. See index/halffit.h. */
#include "index/halffit.h"
#define RT_BACKEND halffit
#define RT_BACKEND_INDEX RT_INDEX_HALFFIT
#include "heap/facade.inc"
