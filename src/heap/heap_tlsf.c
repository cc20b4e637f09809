/* The heap with the TLSF index, 16 slots per octave (RT_TLSF_SL_LOG2). See index/tlsf.h. */
#include "index/tlsf.h"
#define RT_BACKEND tlsf
#define RT_BACKEND_INDEX RT_INDEX_TLSF
#include "heap/facade.inc"
