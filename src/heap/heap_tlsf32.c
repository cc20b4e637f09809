/* The heap with the TLSF index, 32 slots per octave. See index/tlsf.h. */
#define TLSF_SL_LOG2 5
#include "index/tlsf.h"
#define RT_BACKEND tlsf32
#define RT_BACKEND_INDEX RT_INDEX_TLSF32
#include "heap/facade.inc"
