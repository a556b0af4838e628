/*
 * The sandbox server's per-execution loop in C (optional; the Python loop in _worker.py does
 * the same work when no C compiler is available).
 *
 * Why: the server forks one child per execution, and a fork makes every page of the server
 * copy-on-write. The Python loop writes about 170 of the server's pages per execution
 * (frames, allocations, reference counts), each a page fault, most with a page copy: about
 * 0.55 ms of CPU per execution for the loop, against 0.25 ms here (15 page faults), on the
 * reference 2-core machine. This loop touches a few pages of its own and none of the
 * interpreter's. For the same reason the child's confinement runs here too (confine_child):
 * in Python it cost about 50 more page faults and 0.1 to 0.25 ms more CPU per child.
 *
 * It is loaded into the server with ctypes.PyDLL (the GIL stays held) and called as
 *
 *   int lift_serve(int ctl_in, int ctl_out, const char *tmp_root, const char *keep,
 *                  int drop_uid, int clean_shm, int resume, int *child_fds);
 *
 * and returns
 *    0  in a freshly forked child: child_fds = {result pipe, stderr pipe, request pipe}; when
 *       lift_confine_children was called, the child is already confined (confine_child, the
 *       steps of _confine in _worker.py in the same order) and its pipes are on 3, 2 and 4;
 *       otherwise the Python code confines it. Either way the Python code then reads the
 *       request and runs it (the fork happened in C, the server has no other thread, so the
 *       interpreter's state is consistent);
 *    1  in the server, when cleaning is needed that the Python code does (a descendant that
 *       escaped the child's process group, files left in the temp root or in /dev/shm): the
 *       Python code cleans, then calls again with resume = 1 to send the answer;
 *   -1  the parent closed the control pipe: the waiting child was stopped; clean and return;
 *   -2  an unexpected error (errno is set): the server exits and the parent restarts it.
 *
 * The protocol is the one of _worker.py: a request is a 20-byte header (4-byte big-endian
 * payload length, 8-byte big-endian IEEE double timeout in seconds, 8-byte big-endian
 * sequence number, echoed in the answer) and the payload, which is
 * the child's request frame, passed on unread; the answer is a JSON header frame followed by
 * the raw bytes of the child's result pipe and the first bytes of its stderr.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_RESULT_BYTES (8 * 1024 * 1024)
#define MAX_STDERR_BYTES (8 * 1024)
#define TRIM_BYTES (1024 * 1024)

static char workdir[4096];
static int child_pid = 0, child_pidfd = -1, res_r = -1, err_r = -1, req_w = -1;
static char *res_buf = NULL;
static size_t res_len = 0, res_cap = 0;
static char err_buf[MAX_STDERR_BYTES];
static size_t err_len = 0;
static long long err_total = 0;
static int res_overflow = 0;
static char *payload = NULL;
static size_t payload_cap = 0, payload_used = 0;
static char header[512];
static size_t header_len = 0;
static unsigned long long request_seq = 0;

/* The child's confinement (lift_confine_children); `confine` is 0 until it is called. */
#define CHILD_SETUP_FAILED_EXIT 71
static int confine = 0, landlock_fd = -1, drop_uid_c = -1;
static rlim_t memory_bytes = 0;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* 1: all read; 0: end of file; -1: error. */
static int read_exact(int fd, char *buf, size_t size) {
    while (size) {
        ssize_t n = read(fd, buf, size);
        if (n < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        if (n == 0) return 0;
        buf += n;
        size -= (size_t)n;
    }
    return 1;
}

static int write_all(int fd, const char *buf, size_t size) {
    while (size) {
        ssize_t n = write(fd, buf, size);
        if (n < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        buf += n;
        size -= (size_t)n;
    }
    return 0;
}

static void close_fd(int *fd) {
    if (*fd >= 0) close(*fd);
    *fd = -1;
}

/* Record how each child confines itself right after the fork (see confine_child). Called
 * once by the server before lift_serve; landlock: the ruleset fd or -1. The seccomp filter
 * is not part of it: the child installs it once it has read its request (_child in
 * _worker.py), since for a check script it first forks the process that runs the code. */
int lift_confine_children(int landlock, long long memory, int drop_uid) {
    if (memory <= 0) return -1;
    landlock_fd = landlock;
    memory_bytes = (rlim_t)memory;
    drop_uid_c = drop_uid;
    confine = 1;
    return 0;
}

static void set_limit(int which, rlim_t value) {
    struct rlimit limit = {value, value};
    if (setrlimit(which, &limit) != 0) _exit(CHILD_SETUP_FAILED_EXIT);
}

/* In the child, right after the fork: the steps of _confine in _worker.py, in the same order,
 * without touching the interpreter's objects (each Python step there costs page faults on
 * pages shared with the server). Any failure exits with CHILD_SETUP_FAILED_EXIT. */
static void confine_child(int res_w, int err_w, int req_r) {
    /* 0 and 1 read and discard (/dev/null, as in the server), 2 <- stderr pipe, 3 <- result
     * pipe, 4 <- request pipe */
    if (dup2(err_w, 2) < 0 || dup2(res_w, 3) < 0 || dup2(req_r, 4) < 0)
        _exit(CHILD_SETUP_FAILED_EXIT);
    if (setpgid(0, 0) != 0 || chdir(workdir) != 0) _exit(CHILD_SETUP_FAILED_EXIT);
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) _exit(CHILD_SETUP_FAILED_EXIT);
    if (landlock_fd >= 0 && syscall(446, landlock_fd, 0) != 0) /* landlock_restrict_self */
        _exit(CHILD_SETUP_FAILED_EXIT);
    /* the control pipe to the parent, the Landlock ruleset and everything else */
    if (syscall(436, 5, ~0U, 0) != 0) { /* close_range (Linux 5.9) */
        struct rlimit files;
        int top = getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur != RLIM_INFINITY
                      ? (int)files.rlim_cur
                      : 65536;
        for (int fd = 5; fd < top; fd++) close(fd);
    }
    set_limit(RLIMIT_AS, memory_bytes);
    set_limit(RLIMIT_NPROC, 512);
    set_limit(RLIMIT_NOFILE, 256);
    if (drop_uid_c >= 0) {
        uid_t id = (uid_t)drop_uid_c, r, e, s;
        gid_t gr, ge, gs;
        if (setgroups(0, NULL) != 0 || setresgid(id, id, id) != 0 || setresuid(id, id, id) != 0)
            _exit(CHILD_SETUP_FAILED_EXIT);
        if (getresuid(&r, &e, &s) != 0 || r != id || e != id || s != id)
            _exit(CHILD_SETUP_FAILED_EXIT);
        if (getresgid(&gr, &ge, &gs) != 0 || gr != id || ge != id || gs != id)
            _exit(CHILD_SETUP_FAILED_EXIT);
    }
    /* after the uid change, which clears it: die with the server */
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (getppid() == 1) _exit(CHILD_SETUP_FAILED_EXIT);
}

/* Fork the next child. Returns 0 in the child, 1 in the server, -2 on error. */
static int prefork(const char *tmp_root, int drop_uid, int *child_fds) {
    int res[2], err[2], req[2];
    snprintf(workdir, sizeof workdir, "%s/run", tmp_root);
    if (mkdir(workdir, 0700) != 0) return -2;
    if (drop_uid >= 0 && chown(workdir, (uid_t)drop_uid, (gid_t)drop_uid) != 0) return -2;
    if (pipe2(res, O_CLOEXEC) != 0) return -2;
    if (pipe2(err, O_CLOEXEC) != 0) {
        close(res[0]);
        close(res[1]);
        return -2;
    }
    if (pipe2(req, O_CLOEXEC) != 0) {
        close(res[0]);
        close(res[1]);
        close(err[0]);
        close(err[1]);
        return -2;
    }
    pid_t pid = fork();
    if (pid < 0) {
        int saved = errno;
        close(res[0]);
        close(res[1]);
        close(err[0]);
        close(err[1]);
        close(req[0]);
        close(req[1]);
        errno = saved;
        return -2;
    }
    if (pid == 0) {
        close(res[0]);
        close(err[0]);
        close(req[1]);
        child_fds[0] = res[1];
        child_fds[1] = err[1];
        child_fds[2] = req[0];
        if (confine) confine_child(res[1], err[1], req[0]);
        return 0;
    }
    close(res[1]);
    close(err[1]);
    close(req[0]);
    setpgid(pid, pid); /* the child does it too; whichever comes first */
    child_pid = pid;
    child_pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    res_r = res[0];
    err_r = err[0];
    req_w = req[1];
    return 1;
}

static void consume(int fd, const char *data, size_t n) {
    if (fd == res_r) {
        if (res_len + n > MAX_RESULT_BYTES) {
            res_overflow = 1;
            n = MAX_RESULT_BYTES - res_len;
        }
        if (res_len + n > res_cap) {
            size_t cap = res_cap ? res_cap : 65536;
            while (cap < res_len + n) cap *= 2;
            /* not realloc: the old block, freed, would keep this execution's bytes where the
             * next child (a fork of this server) could read them (see scrub) */
            char *grown = malloc(cap);
            if (grown == NULL) {
                res_overflow = 1;
                return;
            }
            if (res_len) memcpy(grown, res_buf, res_len);
            if (res_buf != NULL) {
                explicit_bzero(res_buf, res_cap);
                free(res_buf);
            }
            res_buf = grown;
            res_cap = cap;
        }
        memcpy(res_buf + res_len, data, n);
        res_len += n;
    } else {
        err_total += (long long)n;
        size_t keep = MAX_STDERR_BYTES - err_len;
        if (keep > n) keep = n;
        memcpy(err_buf + err_len, data, keep);
        err_len += keep;
    }
}

static char chunk[65536]; /* pump's reads */
static size_t chunk_used = 0;

/* Read what fd has; returns 0 at end of file (and closes it). */
static int pump(int *fd, int drain) {
    for (;;) {
        ssize_t n = read(*fd, chunk, sizeof chunk);
        if (n > 0) {
            if ((size_t)n > chunk_used) chunk_used = (size_t)n;
            consume(*fd, chunk, (size_t)n);
            if (!drain) return 1;
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) return 1;
        close_fd(fd);
        return 0;
    }
}

/* Whether the temp root holds anything but the names in keep (NUL-separated, "" ends). */
static int has_leftovers(const char *dir, const char *keep) {
    DIR *d = opendir(dir);
    if (d == NULL) return errno != ENOENT;
    struct dirent *entry;
    int found = 0;
    while (!found && (entry = readdir(d)) != NULL) {
        const char *name = entry->d_name;
        if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0) continue;
        int kept = 0;
        for (const char *k = keep; *k; k += strlen(k) + 1) {
            if (strcmp(k, name) == 0) {
                kept = 1;
                break;
            }
        }
        if (!kept) found = 1;
    }
    closedir(d);
    return found;
}

/* Run the request that was read into payload; leave the answer's header in `header`.
 * Returns 1 when the Python code must clean up before the answer goes out. */
static int run_one(size_t size, double timeout_s, const char *tmp_root, const char *keep,
                   int clean_shm) {
    double start = now(), deadline = start + timeout_s;
    int exited = 0, timed_out = 0, status = 0, reaped = 0;
    res_len = 0;
    err_len = 0;
    err_total = 0;
    res_overflow = 0;
    write_all(req_w, payload, size); /* a child that died early is reported below */
    close_fd(&req_w);
    for (;;) {
        double remaining = deadline - now();
        if (remaining <= 0) {
            timed_out = 1;
            break;
        }
        struct pollfd fds[3];
        int nfds = 0;
        if (res_r >= 0) fds[nfds++] = (struct pollfd){res_r, POLLIN, 0};
        if (err_r >= 0) fds[nfds++] = (struct pollfd){err_r, POLLIN, 0};
        int wait_ms = (int)ceil(remaining * 1000.0);
        if (child_pidfd >= 0) {
            fds[nfds++] = (struct pollfd){child_pidfd, POLLIN, 0};
        } else if (wait_ms > 5) {
            wait_ms = 5;
        }
        int ready = poll(fds, (nfds_t)nfds, wait_ms);
        if (ready < 0 && errno != EINTR) return -2;
        for (int i = 0; ready > 0 && i < nfds; i++) {
            if (!fds[i].revents) continue;
            if (fds[i].fd == child_pidfd) {
                exited = 1;
            } else if (fds[i].fd == res_r) {
                pump(&res_r, 0);
            } else if (fds[i].fd == err_r) {
                pump(&err_r, 0);
            }
        }
        if (child_pidfd < 0 && !exited) {
            pid_t done = waitpid(child_pid, &status, WNOHANG);
            if (done == child_pid) exited = reaped = 1;
        }
        if (exited) {
            int *pipes[2] = {&res_r, &err_r};
            for (int i = 0; i < 2; i++) {
                if (*pipes[i] < 0) continue;
                fcntl(*pipes[i], F_SETFL, fcntl(*pipes[i], F_GETFL) | O_NONBLOCK);
                pump(pipes[i], 1);
            }
            break;
        }
    }
    double elapsed_ms = (now() - start) * 1000.0;
    if (!reaped) {
        /* Kill the child's group while the child is unreaped (a zombie at most): its pid,
         * the group id, cannot have been reused yet. */
        if (killpg(child_pid, SIGKILL) != 0 && !exited) kill(child_pid, SIGKILL);
        while (waitpid(child_pid, &status, 0) < 0 && errno == EINTR) {
        }
    }
    close_fd(&child_pidfd);
    close_fd(&res_r);
    close_fd(&err_r);
    int cleanup = 0;
    for (;;) { /* descendants that escaped the group and have already exited */
        pid_t other = waitpid(-1, NULL, WNOHANG);
        if (other > 0) continue;
        if (other == 0) cleanup = 1; /* still running: the Python sweep kills them */
        break;
    }
    if (rmdir(workdir) != 0 && errno != ENOENT) cleanup = 1;
    if (has_leftovers(tmp_root, keep)) cleanup = 1;
    if (clean_shm && has_leftovers("/dev/shm", "")) cleanup = 1;
    char exit_code[16] = "null", signal_no[16] = "null";
    if (WIFEXITED(status)) snprintf(exit_code, sizeof exit_code, "%d", WEXITSTATUS(status));
    if (WIFSIGNALED(status)) snprintf(signal_no, sizeof signal_no, "%d", WTERMSIG(status));
    int n = snprintf(header + 4, sizeof header - 4,
                     "{\"exit_code\":%s,\"signal\":%s,\"timed_out\":%s,\"elapsed_ms\":%.3f,"
                     "\"res_overflow\":%s,\"err_total\":%lld,\"res_len\":%zu,\"err_len\":%zu,"
                     "\"seq\":%llu}",
                     exit_code, signal_no, timed_out ? "true" : "false", elapsed_ms,
                     res_overflow ? "true" : "false", err_total, res_len, err_len, request_seq);
    header[0] = (char)((n >> 24) & 0xFF);
    header[1] = (char)((n >> 16) & 0xFF);
    header[2] = (char)((n >> 8) & 0xFF);
    header[3] = (char)(n & 0xFF);
    header_len = (size_t)n + 4;
    return cleanup;
}

/* Zero every byte of the last execution this server holds (its request, what its child
 * wrote, the answer's header) before the next fork: the next child is a copy of this
 * server's memory, and must find nothing of another execution in it. Nothing else of an
 * execution passes through the server's memory: the request and the answer are read and
 * written straight from and to these buffers, and the Python code never sees them. */
static void scrub(void) {
    if (payload != NULL) explicit_bzero(payload, payload_used);
    payload_used = 0;
    if (res_buf != NULL) explicit_bzero(res_buf, res_len);
    explicit_bzero(err_buf, err_len);
    explicit_bzero(chunk, chunk_used);
    chunk_used = 0;
    explicit_bzero(header, sizeof header);
    res_len = 0;
    err_len = 0;
}

static void discard(void) {
    close_fd(&req_w); /* the waiting child reads end of file and exits */
    if (child_pid > 0) {
        killpg(child_pid, SIGKILL);
        while (waitpid(child_pid, NULL, 0) < 0 && errno == EINTR) {
        }
    }
    close_fd(&child_pidfd);
    close_fd(&res_r);
    close_fd(&err_r);
    child_pid = 0;
}

int lift_serve(int ctl_in, int ctl_out, const char *tmp_root, const char *keep, int drop_uid,
               int clean_shm, int resume, int *child_fds) {
    int rc;
    if (!resume) {
        rc = prefork(tmp_root, drop_uid, child_fds);
        if (rc != 1) return rc;
    }
    for (;;) {
        if (!resume) {
            unsigned char head[20];
            int got = read_exact(ctl_in, (char *)head, sizeof head);
            if (got <= 0) {
                discard();
                return got == 0 ? -1 : -2;
            }
            size_t size = ((size_t)head[0] << 24) | ((size_t)head[1] << 16) |
                          ((size_t)head[2] << 8) | (size_t)head[3];
            uint64_t bits = 0;
            for (int i = 4; i < 12; i++) bits = (bits << 8) | head[i];
            double timeout_s;
            memcpy(&timeout_s, &bits, sizeof timeout_s);
            request_seq = 0;
            for (int i = 12; i < 20; i++) request_seq = (request_seq << 8) | head[i];
            if (size > payload_cap) { /* the old buffer was scrubbed: nothing is copied */
                free(payload);
                payload = malloc(size);
                payload_cap = payload == NULL ? 0 : size;
                if (payload == NULL) return -2;
            }
            payload_used = size;
            got = read_exact(ctl_in, payload, size);
            if (got <= 0) {
                discard();
                return got == 0 ? -1 : -2;
            }
            rc = run_one(size, timeout_s, tmp_root, keep, clean_shm);
            if (rc < 0) return rc;
            if (rc == 1) return 1; /* the Python code cleans, then resumes here */
        }
        resume = 0;
        if (write_all(ctl_out, header, header_len) != 0) return -2;
        if (res_len && write_all(ctl_out, res_buf, res_len) != 0) return -2;
        if (err_len && write_all(ctl_out, err_buf, err_len) != 0) return -2;
        scrub();
        /* Give back large buffers: every page the server keeps is copied into each fork's
         * page tables. */
        if (res_cap > TRIM_BYTES) {
            free(res_buf);
            res_buf = NULL;
            res_cap = 0;
        }
        if (payload_cap > TRIM_BYTES) {
            free(payload);
            payload = NULL;
            payload_cap = 0;
        }
        rc = prefork(tmp_root, drop_uid, child_fds); /* while the parent judges */
        if (rc != 1) return rc;
    }
}
