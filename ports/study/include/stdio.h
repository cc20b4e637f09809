/* SPDX-License-Identifier: MIT */
/* ports/study/include/stdio.h -- for workloads/workload.c built for a target (ports/study): the port's C
 * library subset (ports/common/port_libc.h) stands in for the hosted <stdio.h>, so the host
 * benchmark's generators compile unchanged and produce the same traces from the same seed. */
#include "port_libc.h"
