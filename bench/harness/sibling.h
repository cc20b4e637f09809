/* SPDX-License-Identifier: MIT */
/*
 * bench/harness/sibling.h -- running a sibling benchmark binary as a child process.
 *
 * A compile-time knob (RT_HARDENING, RT_HEAP_ALIGN, the word size) holds one value per binary, so
 * the build makes siblings of rtbench beside it (rtbench-hardening<N>, rtbench-align8,
 * rtbench-m32: bench/CMakeLists.txt), and the experiments that compare values of a knob
 * (studies/exp_hardening.c, studies/exp_layout.c) run them as child processes and read their CSVs.
 *
 * A child runs in its own process group with stdin from /dev/null and stdout to a file; each
 * complete line of its stderr (progress lines and errors) goes to the caller's callback. Ctrl-C
 * (drv_stop) is forwarded to the child's group as SIGINT; a group that has not exited 5 s later
 * is killed. On Linux the child dies with rtbench (PR_SET_PDEATHSIG).
 */
#ifndef RTBENCH_SIBLING_H
#define RTBENCH_SIBLING_H

#include <stdbool.h>
#include <stddef.h>

/* The directory of this binary (/proc/self/exe), with a trailing '/'. False if unreadable. */
bool sib_self_dir(char *out, size_t size);

/* A new private directory $TMPDIR/rtbench-<tag>-XXXXXX (else under /tmp). False if none. */
bool sib_tmpdir(char *out, size_t size, const char *tag);

/* Removes dir, its files and its subdirectories' files. */
void sib_remove_tree(const char *dir);

/* Monotonic seconds. */
double sib_now_s(void);

/* Called with each complete line of the child's stderr, without its newline. */
typedef void (*sib_line_fn)(void *context, const char *line);

/* Runs exe with argv (argv[0] = exe, NULL-terminated), its stdout into stdout_path, and waits
 * for it. Returns its exit status; -1 when it could not be started or reaped; 130 when
 * interrupted by SIGINT; 128 + the signal that killed it otherwise. */
int sib_run(const char *exe, const char *const *argv, const char *stdout_path, sib_line_fn on_line, void *context);

/* One data line of a CSV file, split at its commas; returns whether the row was taken. */
typedef bool (*sib_row_fn)(void *context, char **field, size_t nfields);

/* Reads dir/name, a CSV file that a sibling wrote: comment lines ('#') and the header (the first
 * other line) skipped; each other line's newline stripped, the line split at its commas (the
 * files read this way never quote a comma) and handed to row when it has at least min_fields
 * fields (at most 32 are split). Returns the rows row took; 0 when the file cannot be read. */
size_t sib_read_csv(const char *dir, const char *name, size_t min_fields, sib_row_fn row, void *context);

#endif /* RTBENCH_SIBLING_H */
