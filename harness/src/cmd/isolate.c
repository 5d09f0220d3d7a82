/* run --isolate: each cell in a child process.  The child runs the policy,
 * validates and simulates as usual, and sends back one status byte and its
 * row over a pipe; the parent reads with a deadline, so a child that hangs is
 * killed, and one that dies by a signal is reported by it. */
#define _POSIX_C_SOURCE 200809L
#include "isolate.h"
#include "core/util.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The children being waited for, for sb_isolate_kill_all: a slot per thread
 * that can fork one (run --jobs is at most 256), written outside the handler
 * under a lock, read by the handler as whole ints. */
#define MAX_CHILDREN 512
static volatile sig_atomic_t children[MAX_CHILDREN];
static pthread_mutex_t children_mu = PTHREAD_MUTEX_INITIALIZER;

static int child_add(pid_t pid)
{
    pthread_mutex_lock(&children_mu);
    int k = 0;
    while (k < MAX_CHILDREN && children[k])
        k++;
    if (k < MAX_CHILDREN)
        children[k] = (sig_atomic_t)pid;
    pthread_mutex_unlock(&children_mu);
    return k;
}

/* Cleared before the child is reaped, so its pid cannot have been reused by
 * another process when the handler kills it. */
static void child_forget(int k)
{
    if (k < MAX_CHILDREN)
        children[k] = 0;
}

void sb_isolate_kill_all(void)
{
    for (int k = 0; k < MAX_CHILDREN; k++) {
        pid_t pid = (pid_t)children[k];
        if (pid > 0)
            kill(pid, SIGKILL);
    }
}

static const char *signal_name(int sig)
{
    switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGABRT: return "SIGABRT";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGKILL: return "SIGKILL";
    default: return NULL;
    }
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The child: run, send, exit without running the parent's atexit handlers. */
static void child(int fd, sb_cell_fn fn, void *ctx)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    int st = f ? fn(f, ctx) : -1;
    if (f)
        fclose(f);
    signed char b = (signed char)st;
    int ok = write(fd, &b, 1) == 1;
    for (size_t off = 0; ok && off < len;) {
        ssize_t k = write(fd, buf + off, len - off);
        ok = k > 0;
        off += ok ? (size_t)k : 0;
    }
    _exit(ok ? 0 : 3);
}

/* Reads everything the child sends until it closes the pipe or time is up;
 * returns 0, or -1 on timeout. */
static int drain(int fd, double deadline, char **data, size_t *n)
{
    size_t cap = 4096;
    *data = sb_xmalloc(cap);
    *n = 0;
    for (;;) {
        double left = deadline - now_s();
        if (left <= 0)
            return -1;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int r = poll(&p, 1, left > 1e6 ? -1 : (int)(left * 1000) + 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r == 0)
            continue; /* the deadline check above decides */
        if (*n == cap)
            *data = sb_xrealloc(*data, cap *= 2);
        ssize_t k = read(fd, *data + *n, cap - *n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return 0;
        *n += (size_t)k;
    }
}

int sb_isolate(sb_cell_fn fn, void *ctx, double timeout_s, char **row, const char **why,
               char *why_buf, size_t n_why, int *sig)
{
    int fds[2];
    *row = NULL;
    *why = NULL;
    *sig = 0;
    fflush(NULL); /* nothing buffered may be written twice */
    if (pipe(fds) != 0) {
        *why = "crash:pipe";
        return 1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]), close(fds[1]);
        *why = "crash:fork";
        return 1;
    }
    if (pid == 0) {
        close(fds[0]);
        child(fds[1], fn, ctx);
    }
    int slot = child_add(pid);
    close(fds[1]);
    char *data;
    size_t n;
    int timed_out = drain(fds[0], now_s() + timeout_s, &data, &n) != 0;
    close(fds[0]);
    if (timed_out)
        kill(pid, SIGKILL);
    child_forget(slot);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    /* stopped, not crashed: Ctrl-C reaches the whole process group, and the
     * child may die of it before this process runs its handler */
    if (!timed_out && WIFSIGNALED(st) &&
        (WTERMSIG(st) == SIGINT || WTERMSIG(st) == SIGTERM || WTERMSIG(st) == SIGHUP)) {
        free(data);
        *sig = WTERMSIG(st);
        *why = *sig == SIGINT ? "SIGINT" : *sig == SIGTERM ? "SIGTERM" : "SIGHUP";
        return SB_ISOLATE_INTERRUPTED;
    }
    if (timed_out) {
        free(data);
        *why = "timeout";
        return 1;
    }
    if (WIFSIGNALED(st) || !WIFEXITED(st) || WEXITSTATUS(st) != 0 || n < 1) {
        const char *name = WIFSIGNALED(st) ? signal_name(WTERMSIG(st)) : NULL;
        if (name)
            snprintf(why_buf, n_why, "crash:%s", name);
        else if (WIFSIGNALED(st))
            snprintf(why_buf, n_why, "crash:signal %d", WTERMSIG(st));
        else
            snprintf(why_buf, n_why, "crash:exit %d", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
        free(data);
        *why = why_buf;
        return 1;
    }
    int status = (signed char)data[0];
    *row = sb_xmalloc(n);
    memcpy(*row, data + 1, n - 1);
    (*row)[n - 1] = 0;
    free(data);
    return status;
}
