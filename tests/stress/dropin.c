/* SPDX-License-Identifier: MIT */
/*
 * dropin.c -- librtalloc-malloc.so (drivers/malloc.c) for every allocator of the registry.
 *
 *   dropin <librtalloc-malloc.so> <dropin_linked> [allocator]    the driver
 *   dropin child <scenario>                                       a scenario (dropin_child.h)
 *
 * For each allocator the driver runs this same executable as a child with LD_PRELOAD=<library>
 * and RTALLOC=<allocator>, once per scenario, and checks the child's exit (0, or death by
 * SIGABRT), its stdout (scenario checks print "FAIL ...") and its stderr (the library's report
 * names the call and the pointer; out of memory prints nothing; RTALLOC_STATS prints the stats).
 * Then, once: an unknown RTALLOC name fails clearly, and a program linked with -lrtalloc-malloc
 * (not preloaded) allocates from the library. No timing: every check is on outcomes.
 */
#define _GNU_SOURCE

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>

#include "dropin_child.h"
#include "rtalloc/registry.h"

typedef struct {
    const char *mode;       /* scenario of dropin_child.h; NULL: run `program` instead */
    const char *env[3];     /* extra "NAME=value" settings */
    int signal;             /* 0: must exit 0; else must die of this signal */
    const char *call;       /* the report must name this call and a pointer the child printed */
    const char *err_has[2]; /* stderr must contain these (%s: the allocator's name) */
    bool err_empty;         /* stderr must be empty */
} dropin_case_t;

static const dropin_case_t cases[] = {
    {"semantics", {"RTALLOC_STATS=1"}, 0, NULL, {"stats: pid", "foreign_frees 0"}, false},
    {"enomem", {"RTALLOC_HEAP=4M"}, 0, NULL, {NULL}, true},
    {"threads", {NULL}, 0, NULL, {NULL}, true},
    {"fork", {NULL}, 0, NULL, {NULL}, true},
    {"double_free", {NULL}, SIGABRT, "free", {NULL}, false},
    {"double_free", {"RTALLOC_ON_ERROR=continue"}, 0, "free", {NULL}, false},
    {"forged", {NULL}, SIGABRT, "free", {NULL}, false},
    {"forged", {"RTALLOC_ON_ERROR=continue"}, 0, "free", {NULL}, false},
    {"interior", {"RTALLOC_ON_ERROR=abort"}, SIGABRT, "free", {NULL}, false},
    {"interior", {"RTALLOC_ON_ERROR=continue"}, 0, "free", {NULL}, false},
    {"overflow", {NULL}, SIGABRT, "free|malloc", {NULL}, false},
    {"overflow", {"RTALLOC_ON_ERROR=continue"}, 0, "free|malloc", {NULL}, false},
    {"copy", {NULL}, SIGABRT, "free|malloc", {NULL}, false},
    {"copy", {"RTALLOC_ON_ERROR=continue"}, 0, "free|malloc", {NULL}, false},
    {"realloc_interior", {NULL}, SIGABRT, "realloc", {NULL}, false},
    {"realloc_interior", {"RTALLOC_ON_ERROR=continue"}, 0, "realloc", {NULL}, false},
    {"realloc_foreign", {NULL}, SIGABRT, "realloc", {NULL}, false},
    {"realloc_foreign", {"RTALLOC_ON_ERROR=continue"}, 0, "realloc", {NULL}, false},
    {"free_foreign", {NULL}, SIGABRT, "free", {NULL}, false},
    {"free_foreign", {"RTALLOC_ON_ERROR=continue", "RTALLOC_STATS=1"}, 0, "free", {"foreign_frees 1"}, false},
    {"semantics", {"RTALLOC_STATS=1", "RTALLOC_HEAP=64M"}, 0, NULL, {"heap 67108864"}, false},
    {"close_stderr", {"RTALLOC_STATS=1"}, 0, NULL, {"stats: pid", "frees "}, false},
};

#if defined(RT_DEBUG) && RT_DEBUG >= 2
#define RT_DEBUG_WALKS true
#else
#define RT_DEBUG_WALKS false
#endif

static int passed, failed;

typedef struct {
    char out[16384];
    char err[16384];
    int status;
} outcome_t;

static void slurp(const char *path, char *buf, size_t cap)
{
    buf[0] = '\0';
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        return;
    }
    ssize_t n = read(fd, buf, cap - 1u);
    buf[n > 0 ? n : 0] = '\0';
    (void)close(fd);
    (void)unlink(path);
}

static void child_exec(const char *const argv[], const char *lib, const char *alloc, const char *const env[3],
                       const char *out, const char *err)
{
    int fo = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int fe = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fo < 0 || fe < 0 || dup2(fo, 1) < 0 || dup2(fe, 2) < 0) {
        _exit(126);
    }
    const char *vars[] = {"RTALLOC_HEAP", "RTALLOC_ON_ERROR", "RTALLOC_STATS", "RTALLOC_MLOCK", "LD_PRELOAD"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        (void)unsetenv(vars[i]);
    }
    if (lib != NULL) {
        (void)setenv("LD_PRELOAD", lib, 1);
    }
    (void)setenv("RTALLOC", alloc, 1);
#if defined(RT_DEBUG) && RT_DEBUG >= 2
    /* RT_DEBUG=2 checks the whole heap at every call: the buddy's check reads its bitmaps, which
     * grow with the heap (a minute per case at the 1 GiB default), so the cases run on 4 MiB
     * unless they set a size of their own. */
    (void)setenv("RTALLOC_HEAP", "4M", 1);
#endif
    for (size_t i = 0; i < 3 && env[i] != NULL; i++) {
        (void)putenv((char *)(uintptr_t)env[i]);
    }
    execv(argv[0], (char *const *)(uintptr_t)argv);
    _exit(127);
}

static void run(const char *const argv[], const char *lib, const char *alloc, const char *const env[3], outcome_t *o)
{
    char out[64], err[64];
    (void)snprintf(out, sizeof out, "dropin.%d.out", (int)getpid());
    (void)snprintf(err, sizeof err, "dropin.%d.err", (int)getpid());
    (void)fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        child_exec(argv, lib, alloc, env, out, err);
    }
    o->status = -1;
    if (pid < 0 || waitpid(pid, &o->status, 0) != pid) {
        o->status = -1;
    }
    slurp(out, o->out, sizeof o->out);
    slurp(err, o->err, sizeof o->err);
}

/* True when stderr holds "rtalloc-malloc: <call>(<p>)" for a pointer p the child printed, for
 * one of the calls of `calls` ("free|malloc"). */
static bool names_pointer(const outcome_t *o, const char *calls)
{
    char call[32];
    size_t len = strcspn(calls, "|");
    (void)snprintf(call, sizeof call, "%.*s", (int)len, calls);
    if (calls[len] == '|' && names_pointer(o, calls + len + 1u)) {
        return true;
    }
    for (const char *s = strstr(o->out, "ptr "); s != NULL; s = strstr(s + 1, "ptr ")) {
        char ptr[64] = "";
        char want[128];
        if (sscanf(s + 4, "%63s", ptr) != 1) {
            continue;
        }
        (void)snprintf(want, sizeof want, "rtalloc-malloc: %s(%s)", call, ptr);
        if (strstr(o->err, want) != NULL) {
            return true;
        }
    }
    return false;
}

static bool exit_as(const outcome_t *o, int sig)
{
    if (sig == 0) {
        return o->status >= 0 && WIFEXITED(o->status) && WEXITSTATUS(o->status) == 0;
    }
    return o->status >= 0 && WIFSIGNALED(o->status) && WTERMSIG(o->status) == sig;
}

static void verdict(bool ok, const char *alloc, const char *what, const dropin_case_t *c, const outcome_t *o)
{
    if (ok) {
        passed++;
        return;
    }
    failed++;
    printf("FAIL %s %s (%s%s): status 0x%x\n--- stdout:\n%s--- stderr:\n%s---\n", alloc, what,
           c != NULL && c->env[0] != NULL ? c->env[0] : "", c != NULL && c->env[1] != NULL ? " ..." : "",
           (unsigned)o->status, o->out, o->err);
}

static void run_case(const char *self, const char *lib, const char *alloc, const dropin_case_t *c)
{
    static outcome_t o;
    const char *argv[] = {self, "child", c->mode, NULL};
    run(argv, lib, alloc, c->env, &o);
    bool ok = exit_as(&o, c->signal) && strstr(o.out, "FAIL") == NULL;
    /* RT_DEBUG >= 2: the library's walk after every call may find the damage first and report it
     * as "check", with no pointer (tests/contract/overflow.c judges those calls the same way). */
    bool by_walk = RT_DEBUG_WALKS && strstr(o.err, "rtalloc-malloc: check(") != NULL;
    ok = ok && (c->call == NULL || names_pointer(&o, c->call) || by_walk);
    ok = ok && (!c->err_empty || o.err[0] == '\0');
    for (size_t i = 0; i < 2 && c->err_has[i] != NULL; i++) {
        ok = ok && strstr(o.err, c->err_has[i]) != NULL;
    }
    if (c->err_has[0] != NULL) { /* a stats line names the allocator */
        char name[80];
        (void)snprintf(name, sizeof name, "allocator %s,", alloc);
        ok = ok && strstr(o.err, name) != NULL;
    }
    if (c->env[0] != NULL && strcmp(c->env[0], "RTALLOC_STATS=1") == 0 && c->env[1] == NULL && !RT_DEBUG_WALKS) {
        /* the default heap of the allocator's family (drivers/malloc.c): the trees' and wfc's
         * small one (they touch their whole buffer at create), the others' large one (RT_DEBUG 2
         * runs every case on 4 MiB: child_exec) */
        const rt_allocator_t *d = rt_registry_find(alloc);
        bool tree = d != NULL && (d->family == RT_FAMILY_TREE || d->family == RT_FAMILY_TREE_CACHED);
        char heap[64];
        (void)snprintf(heap, sizeof heap, ", heap %zu,",
                       tree ? (size_t)16u << 20 : (sizeof(void *) > 4u ? (size_t)1u << 30 : (size_t)256u << 20));
        ok = ok && strstr(o.err, heap) != NULL;
    }
    verdict(ok, alloc, c->mode, c, &o);
}

/* Once: an unknown name aborts with the list of valid names; bad settings abort with a message;
 * a program linked with the library (no LD_PRELOAD) allocates from it. */
static void run_once(const char *self, const char *lib, const char *linked)
{
    static outcome_t o;
    const char *none[3] = {NULL};
    const char *argv[] = {self, "child", "semantics", NULL};
    run(argv, lib, "no_such_allocator", none, &o);
    bool ok = exit_as(&o, SIGABRT) && strstr(o.err, "RTALLOC=no_such_allocator") != NULL &&
              strstr(o.err, " tlsf") != NULL && strstr(o.err, " bsd44") != NULL;
    verdict(ok, "no_such_allocator", "unknown name", NULL, &o);
    const char *bad_heap[3] = {"RTALLOC_HEAP=12X"};
    run(argv, lib, "tlsf", bad_heap, &o);
    verdict(exit_as(&o, SIGABRT) && strstr(o.err, "RTALLOC_HEAP") != NULL, "tlsf", "RTALLOC_HEAP=12X", NULL, &o);
    /* RTALLOC_STATS=<path>: the line goes to that file (appended), not to stderr */
    char path[80], setting[96];
    (void)snprintf(path, sizeof path, "dropin.%d.stats", (int)getpid());
    (void)snprintf(setting, sizeof setting, "RTALLOC_STATS=%s", path);
    const char *to_file[3] = {setting};
    (void)unlink(path);
    run(argv, lib, "tlsf", to_file, &o);
    char file[4096];
    slurp(path, file, sizeof file);
    verdict(exit_as(&o, 0) && strstr(file, "stats: pid") != NULL && strstr(o.err, "stats: pid") == NULL, "tlsf",
            "RTALLOC_STATS=<path>", NULL, &o);
    const char *no_file[3] = {"RTALLOC_STATS=/nonexistent-dir/stats"};
    run(argv, lib, "tlsf", no_file, &o);
    verdict(exit_as(&o, SIGABRT) && strstr(o.err, "RTALLOC_STATS") != NULL, "tlsf", "RTALLOC_STATS unwritable", NULL,
            &o);
    const char *stats[3] = {"RTALLOC_STATS=1"};
    const char *largv[] = {linked, NULL};
    size_t count = 0;
    const rt_allocator_t *const *all = rt_registry(&count);
    for (size_t i = 0; i < count; i += count - 1u) { /* the first and the last */
        run(largv, NULL, all[i]->name, stats, &o);
        char name[80];
        (void)snprintf(name, sizeof name, "allocator %s,", all[i]->name);
        ok = exit_as(&o, 0) && strstr(o.out, "linked ok") != NULL && strstr(o.err, name) != NULL &&
             strstr(o.err, "mallocs 0,") == NULL;
        verdict(ok, all[i]->name, "linked program", NULL, &o);
    }
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "child") == 0) {
        return dc_child(argv[2]);
    }
    if (argc < 3) {
        fprintf(stderr, "usage: %s <librtalloc-malloc.so> <dropin_linked> [allocator]\n", argv[0]);
        return 2;
    }
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1u);
    if (n <= 0) {
        return 2;
    }
    self[n] = '\0';
    size_t count = 0;
    const rt_allocator_t *const *all = rt_registry(&count);
#ifdef RT_EXPECTED_ALLOCATORS
    verdict(count >= RT_EXPECTED_ALLOCATORS, "registry", "allocator count", NULL, &(outcome_t){.status = 0});
#endif
    for (size_t i = 0; i < count; i++) {
        if (argc > 3 && strcmp(argv[3], all[i]->name) != 0) {
            continue;
        }
        for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
            run_case(self, argv[1], all[i]->name, &cases[k]);
        }
        if (all[i]->family != RT_FAMILY_TREE && all[i]->family != RT_FAMILY_TREE_CACHED) {
            /* the trees touch their whole (small) heap at create: nothing to see there */
            static const dropin_case_t large[2] = {
                {"large_untouched", {"RTALLOC_HEAP=256M"}, 0, NULL, {NULL}, false},
                {"large_untouched_zeroed", {"RTALLOC_HEAP=256M"}, 0, NULL, {NULL}, false}};
            run_case(self, argv[1], all[i]->name, &large[all[i]->create_zeroed != NULL]);
        }
        printf("%s: done (%d passed, %d failed so far)\n", all[i]->name, passed, failed);
    }
    run_once(self, argv[1], argv[2]);
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
