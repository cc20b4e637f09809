/* The heap with the VaiOS blog's segregated-fit index. See index/seglist.h. */
#include "index/seglist.h"
#define RT_BACKEND seglist
#define RT_BACKEND_INDEX RT_INDEX_SEGLIST
#include "heap/facade.inc"
