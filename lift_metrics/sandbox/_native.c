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
 * (child_fds: 8 ints) and returns
 *    0  in a freshly forked child: child_fds = {result pipe, stderr pipe, request pipe, calls
 *       pipe, replies pipe}; when lift_confine_children was called, the child is already
 *       confined (confine_child, the steps of _confine in _worker.py in the same order) and
 *       its pipes are on 3, 2, 4, 5 and 6; otherwise the Python code confines it. Either way
 *       the Python code then reads the request and runs it (the fork happened in C, the
 *       server has no other thread, so the interpreter's state is consistent);
 *    2  in a freshly forked checking process (spawn_checker): child_fds[0] = its socket to
 *       the server; the Python code confines it (_confine_checker: it is forked once per
 *       CHECKER_RUNS checks, so the page faults of doing it in Python do not matter) and
 *       runs the checker's loop there (_checker_main);
 *    1  in the server, when cleaning is needed that the Python code does (a descendant that
 *       escaped the child's process group, files left in the temp root or in /dev/shm):
 *       child_fds[7] = the checking process's pid (0: none), which the sweep spares; the
 *       Python code cleans, then calls again with resume = 1 to send the answer, or 2 when
 *       its sweep reaped the checking process (it had ended);
 *   -1  the parent closed the control pipe: the waiting child was stopped; clean and return;
 *   -2  an unexpected error (errno is set): the server exits and the parent restarts it.
 *
 * The protocol is the one of _worker.py: a request is a 20-byte header (4-byte big-endian
 * payload length, 8-byte big-endian IEEE double timeout in seconds, 8-byte big-endian
 * sequence number, echoed in the answer) and the payload, which is a mode mark ('i' or 's')
 * and the child's two request frames; the answer is a JSON header frame followed by the raw
 * bytes of the execution's result pipe and the first bytes of its stderr.
 *
 * I/O cases: the whole payload goes to the child. Check scripts: the mark and the first
 * frame go to the child, the second frame to the server's checking process over a unix
 * socket, with the result and stderr pipes and the check's ends of the calls and replies
 * pipes (SCM_RIGHTS); the server then closes its copies. The execution ends when the child
 * exited and the checking process closed the result pipe, or at the deadline: then the
 * child's group is killed and, if the checking process still holds the result pipe (a check
 * that runs on by itself), the checking process too; a fresh one is forked before the next
 * check script, as after CHECKER_RUNS checks or when it died. It is forked from the server
 * and zeroes this loop's buffers at once (scrub), so it holds nothing of any execution.
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
#include <sys/socket.h>
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
/* the ends handed to the checking process for a check script (closed for I/O cases) */
static int handed[4] = {-1, -1, -1, -1}; /* result, stderr, calls (write), replies (read) */
/* the checking process: its pid (0: none), the server's end of its socket, checks run */
#define CHECKER_RUNS 256
static pid_t checker_pid = 0;
static int checker_sock = -1, checker_runs = 0;
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
 * is not part of it: the child installs it in Python once it has read its request (_child
 * in _worker.py), with its own pid patched in; no candidate code runs before that. */
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

/* The steps of _restrict in _worker.py: no new privileges, Landlock, every descriptor from
 * first_closed up closed, the limits, the uid change, death with the server. */
static void restrict_process(int first_closed) {
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) _exit(CHILD_SETUP_FAILED_EXIT);
    if (landlock_fd >= 0 && syscall(446, landlock_fd, 0) != 0) /* landlock_restrict_self */
        _exit(CHILD_SETUP_FAILED_EXIT);
    /* the control pipe to the parent, the Landlock ruleset and everything else */
    if (syscall(436, (unsigned)first_closed, ~0U, 0) != 0) { /* close_range (Linux 5.9) */
        struct rlimit files;
        int top = getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur != RLIM_INFINITY
                      ? (int)files.rlim_cur
                      : 65536;
        for (int fd = first_closed; fd < top; fd++) close(fd);
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

/* In the child, right after the fork: the steps of _confine in _worker.py, in the same order,
 * without touching the interpreter's objects (each Python step there costs page faults on
 * pages shared with the server). Any failure exits with CHILD_SETUP_FAILED_EXIT. The server
 * keeps its descriptors 0 to 6 open, so the sources are all above 6. */
static void confine_child(const int *fds) {
    /* 0 and 1 read and discard (/dev/null, as in the server), 2 <- stderr pipe, 3 <- result
     * pipe, 4 <- request pipe, 5 <- the check's calls, 6 <- the answers to them */
    if (dup2(fds[1], 2) < 0 || dup2(fds[0], 3) < 0 || dup2(fds[2], 4) < 0 ||
        dup2(fds[3], 5) < 0 || dup2(fds[4], 6) < 0)
        _exit(CHILD_SETUP_FAILED_EXIT);
    if (setpgid(0, 0) != 0 || chdir(workdir) != 0) _exit(CHILD_SETUP_FAILED_EXIT);
    restrict_process(7);
}

/* Fork the next child. Returns 0 in the child, 1 in the server, -2 on error. */
static int prefork(const char *tmp_root, int drop_uid, int *child_fds) {
    /* result, stderr, request, calls (check -> code), replies (code -> check) */
    int pipes[5][2];
    snprintf(workdir, sizeof workdir, "%s/run", tmp_root);
    if (mkdir(workdir, 0700) != 0) return -2;
    if (drop_uid >= 0 && chown(workdir, (uid_t)drop_uid, (gid_t)drop_uid) != 0) return -2;
    for (int i = 0; i < 5; i++) {
        if (pipe2(pipes[i], O_CLOEXEC) != 0) {
            int saved = errno;
            for (int j = 0; j < i; j++) {
                close(pipes[j][0]);
                close(pipes[j][1]);
            }
            errno = saved;
            return -2;
        }
    }
    pid_t pid = fork();
    if (pid < 0) {
        int saved = errno;
        for (int i = 0; i < 5; i++) {
            close(pipes[i][0]);
            close(pipes[i][1]);
        }
        errno = saved;
        return -2;
    }
    /* the child's ends: result and stderr write, request read, calls read, replies write */
    int mine[5] = {pipes[0][1], pipes[1][1], pipes[2][0], pipes[3][0], pipes[4][1]};
    int theirs[5] = {pipes[0][0], pipes[1][0], pipes[2][1], pipes[3][1], pipes[4][0]};
    if (pid == 0) {
        for (int i = 0; i < 5; i++) {
            close(theirs[i]);
            child_fds[i] = mine[i];
        }
        if (confine) confine_child(mine);
        return 0;
    }
    close(pipes[2][0]); /* request, calls and replies: the child's ends */
    close(pipes[3][0]);
    close(pipes[4][1]);
    setpgid(pid, pid); /* the child does it too; whichever comes first */
    child_pid = pid;
    child_pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    res_r = pipes[0][0];
    err_r = pipes[1][0];
    req_w = pipes[2][1];
    /* kept until the mode is known: handed to the checking process for a check script */
    handed[0] = pipes[0][1];
    handed[1] = pipes[1][1];
    handed[2] = pipes[3][1];
    handed[3] = pipes[4][0];
    return 1;
}

static void close_handed(void) {
    for (int i = 0; i < 4; i++) close_fd(&handed[i]);
}

static void scrub(void);

/* Fork the checking process. Returns 2 in it, 1 in the server, -2 on error. */
static int spawn_checker(int *child_fds) {
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) return -2;
    pid_t pid = fork();
    if (pid < 0) {
        int saved = errno;
        close(pair[0]);
        close(pair[1]);
        errno = saved;
        return -2;
    }
    if (pid == 0) {
        close(pair[0]);
        scrub(); /* nothing of any execution in the checking process's memory */
        child_fds[0] = pair[1]; /* the Python code confines it (_confine_checker) */
        return 2;
    }
    close(pair[1]);
    checker_pid = pid;
    checker_sock = pair[0];
    checker_runs = 0;
    return 1;
}

/* Forget the checking process once it was reaped. */
static void checker_gone(void) {
    close_fd(&checker_sock);
    checker_pid = 0;
}

/* Kill the checking process and reap it. */
static void stop_checker(void) {
    if (checker_pid > 0) {
        kill(checker_pid, SIGKILL);
        while (waitpid(checker_pid, NULL, 0) < 0 && errno == EINTR) {
        }
    }
    checker_gone();
}

/* Read a small /proc file into buf as a string; 1 when something was read, else 0. */
static int read_text(const char *path, char *buf, size_t size) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t n = read(fd, buf, size - 1);
    close(fd);
    if (n <= 0) return 0;
    buf[n] = 0;
    return 1;
}

/* Whether the checking process is exiting: the kernel's PF_EXITING flag (0x4, field 9 of
 * /proc/PID/stat) is set first thing in its exit, before its descriptors are released, so a
 * checker that a check killed is seen ending even while its socket still reads as open. */
static int checker_exiting(void) {
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)checker_pid);
    if (!read_text(path, buf, sizeof buf)) return 0;
    char *field = strrchr(buf, ')');
    if (field == NULL) return 0;
    for (int i = 0; i < 7 && field != NULL; i++) field = strchr(field + 1, ' ');
    return field != NULL && (strtoul(field + 1, NULL, 10) & 0x4u) != 0;
}

/* Make sure a checking process runs, fresh enough. Returns 1, 2 in a new checker, or -2.
 * The checker never writes to its socket: a socket that reads as closed is a checker that
 * ended (or is ending: not reaped yet, a check that killed it just closed its pipes), which
 * is stopped and replaced rather than handed the next check; so is one that is exiting. */
static int ready_checker(int *child_fds) {
    if (checker_pid > 0) {
        pid_t done = waitpid(checker_pid, NULL, WNOHANG);
        if (done == checker_pid || (done < 0 && errno == ECHILD)) checker_gone();
    }
    if (checker_pid > 0) {
        struct pollfd ended = {checker_sock, POLLIN, 0};
        if (poll(&ended, 1, 0) != 0 || checker_exiting()) stop_checker();
    }
    if (checker_pid > 0 && checker_runs >= CHECKER_RUNS) stop_checker();
    if (checker_pid <= 0) return spawn_checker(child_fds);
    return 1;
}

/* Send a check's frame with the handed descriptors; 0 when sent, -1 (checker stopped) not. */
static int send_check(const char *data, size_t size) {
    struct iovec iov = {(void *)data, size};
    union {
        char buf[CMSG_SPACE(sizeof handed)];
        struct cmsghdr align;
    } control;
    memset(&control, 0, sizeof control);
    struct msghdr msg = {0};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.buf;
    msg.msg_controllen = sizeof control.buf;
    struct cmsghdr *cmsg = CMSG_FIRSTHDR(&msg);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN(sizeof handed);
    memcpy(CMSG_DATA(cmsg), handed, sizeof handed);
    ssize_t sent;
    do {
        sent = sendmsg(checker_sock, &msg, MSG_NOSIGNAL);
    } while (sent < 0 && errno == EINTR);
    while (sent >= 0 && (size_t)sent < size) {
        ssize_t more = send(checker_sock, data + sent, size - (size_t)sent, MSG_NOSIGNAL);
        if (more < 0 && errno == EINTR) continue;
        sent = more < 0 ? -1 : sent + more;
    }
    if (sent < 0) {
        stop_checker();
        return -1;
    }
    checker_runs++;
    return 0;
}

/* Whether the server's only child left is the checking process (read from /proc, where the
 * kernel lists a thread's children; the server has one thread). */
static int only_checker_left(void) {
    if (checker_pid <= 0) return 0;
    char path[64], buf[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/children", (int)getpid());
    if (!read_text(path, buf, sizeof buf)) return 0;
    char *end;
    long only = strtol(buf, &end, 10);
    while (*end == ' ' || *end == '\n') end++;
    return only == (long)checker_pid && *end == 0;
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
 * Returns 1 when the Python code must clean up before the answer goes out, 2 in a checking
 * process forked here, -2 on error. */
static int run_one(size_t size, double timeout_s, const char *tmp_root, const char *keep,
                   int clean_shm, int *child_fds) {
    double start = now(), deadline = start + timeout_s;
    int exited = 0, timed_out = 0, status = 0, reaped = 0;
    res_len = 0;
    err_len = 0;
    err_total = 0;
    res_overflow = 0;
    int script = size > 5 && payload[0] == 's';
    if (script) {
        int rc = ready_checker(child_fds);
        if (rc != 1) return rc;
        size_t first = 5 + (((size_t)(unsigned char)payload[1] << 24) |
                            ((size_t)(unsigned char)payload[2] << 16) |
                            ((size_t)(unsigned char)payload[3] << 8) | (size_t)(unsigned char)payload[4]);
        if (first > size) first = size;
        write_all(req_w, payload, first); /* a child that died early is reported below */
        /* the checker gets the check's frame and the pipes; the server keeps no copy of them,
         * or the checker's end of the result pipe would never read as closed */
        send_check(payload + first, size - first);
        close_handed();
    } else {
        close_handed();
        write_all(req_w, payload, size);
    }
    close_fd(&req_w);
    for (;;) {
        if (exited && !(script && res_r >= 0)) {
            int *pipes[2] = {&res_r, &err_r}; /* what was left in the pipes */
            for (int i = 0; i < 2; i++) {
                if (*pipes[i] < 0) continue;
                fcntl(*pipes[i], F_SETFL, fcntl(*pipes[i], F_GETFL) | O_NONBLOCK);
                pump(pipes[i], 1);
            }
            break;
        }
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
        if (child_pidfd >= 0 && !exited) {
            fds[nfds++] = (struct pollfd){child_pidfd, POLLIN, 0};
        } else if (!exited && wait_ms > 5) {
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
    }
    double elapsed_ms = (now() - start) * 1000.0;
    if (script && res_r >= 0) stop_checker(); /* the check ran past the deadline by itself */
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
        if (other > 0) {
            if (other == checker_pid) checker_gone(); /* it had ended */
            continue;
        }
        /* still running, apart from the checking process: the Python sweep kills them */
        if (other == 0 && !only_checker_left()) cleanup = 1;
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
    stop_checker();
    close_handed();
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
    if (resume == 2) checker_gone(); /* the Python sweep reaped it */
    if (!resume) {
        if (checker_pid <= 0) { /* the first call: the checking process, then the child */
            rc = spawn_checker(child_fds);
            if (rc != 1) return rc;
        }
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
            rc = run_one(size, timeout_s, tmp_root, keep, clean_shm, child_fds);
            if (rc < 0 || rc == 2) return rc; /* an error; in a fresh checking process */
            if (rc == 1) { /* the Python code cleans, then resumes here */
                child_fds[7] = (int)checker_pid;
                return 1;
            }
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
