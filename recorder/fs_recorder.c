// fs_recorder: an LD_PRELOAD object that records, in order, every libc call of a process
// that can change what survives of the files under one watched folder, and can kill the
// process with SIGKILL just before the k-th such call.
//
// Environment (read once, at load):
//   FSREC_DIR        the watched folder (absolute). Unset: the object does nothing.
//   FSREC_LOG        the log file (append-only binary, see recorder/log.ts).
//   FSREC_DATA       "1": keep the bytes of every write in the log (power-loss mode).
//   FSREC_MARK       a file outside the folder whose writes are logged as marks (the
//                    acknowledgement journal), so acknowledgements interleave with calls.
//   FSREC_IGNORE     folders where writes are expected (Deno's cache, the run folder), one
//                    a line (':'-separated when it holds no newline); any other open for
//                    writing outside the watched folder is logged as an "outside" record,
//                    which the reader treats as an error.
//   FSREC_MAX_BYTES  the log's bound (default 256 MiB); past it an overflow record ends
//                    the log, and the reader fails.
//   FSREC_CRASH_AT   k >= 1: SIGKILL just before the k-th counted call of FSREC_CRASH_KIND
//                    (any | write | sync | name; default any).
//   FSREC_ARM_MARKS  n >= 1: count calls only after the n-th write to FSREC_MARK and before
//                    the next one, so that k walks the calls of one operation that the
//                    program brackets with two marks (a crash point for any store). The
//                    marks of every process of the log count (shared in <FSREC_LOG>.marks):
//                    a store whose worker process makes the calls is walked too.
//   FSREC_STOP_AT    k >= 1: SIGSTOP (the calling thread, so the whole process) just before
//                    the k-th lock call (fcntl F_SETLK, F_SETLKW, F_OFD_SETLK*, flock, or a
//                    name made only if missing: mkdir, link, a rename's target, an O_EXCL
//                    open) on a file under the folder, counted while armed as above; the parent
//                    races another writer against the stopped process, then SIGCONTs it.
//   FSREC_STOP_FILE  created just before that SIGSTOP: once it exists, the stopping thread
//                    makes no call but the signal's, so the lock call waits for SIGCONT.
//   FSREC_STOP_KIND  "write": FSREC_STOP_AT counts the calls that change a file (any counted
//                    call, as FSREC_CRASH_KIND any) instead of lock calls, so a process is
//                    held just before its first write inside an operation (cell 5's sweepers).
//   FSREC_REFUSED_FILE  created when a lock call on a watched file is refused (EAGAIN or
//                    EACCES; EWOULDBLOCK for flock; EEXIST or ENOTEMPTY for a name made
//                    only if missing, which also creates <FSREC_REFUSED_FILE>.name: no
//                    kernel lock table shows who holds such a lock) while armed; a blocking
//                    one (F_SETLKW, flock without LOCK_NB) is tried without waiting first,
//                    so that a wait is seen: the process was held out by a lock.
//   FSREC_FAIL_AT    k >= 1: the k-th call of FSREC_FAIL_KIND on a watched file (counted on
//                    its own, while armed as above) fails instead of being made, with
//                    FSREC_FAIL_ERRNO; it is logged failed and injected. Kinds: "write"
//                    (write, pwrite, writev, pwritev and their 64/v2 forms), "sync" (fsync,
//                    fdatasync), "read" (read, pread, readv, preadv: logged only when failed).
//   FSREC_FAIL_ERRNO "ENOSPC", "EIO" or "EDQUOT" (default EIO), or a number.
//   FSREC_FAIL_COUNT n: calls k to k+n-1 fail (default 1; 0: every call from k on, a disk
//                    that stays full or broken).
//   FSREC_FAIL_SHORT "1": a failing write of 2 bytes or more writes its first half and
//                    returns that count (a short write) instead of failing.
//   FSREC_FAIL_FILE  count only calls on files whose path ends with it ("-wal", "-journal":
//                    a disk that fills as the WAL or the journal grows).
//
// Hazards (fs_recorder_hazard.c) are logged as they happen, whatever the options: a
// close that drops the process's fcntl locks, a second SQLite library, a forked child's
// use of an inherited descriptor, an unlink or rename of a file another process has open.
//
// Every record is one writev to the log, under one mutex that is held across the real
// call, so the log's order is the order the calls took effect. A call that fails is
// logged with its errno (it counts as a call, so a crash at k leaves exactly k-1 counted
// records). Only the calling thread ever kills the process, while it holds the mutex,
// so no record is torn by a crash at k. Unset, the FSREC_FAIL_* options change nothing:
// reads are then passed straight on, unlogged.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

enum {
  K_OPEN = 1,
  K_WRITE = 2,
  K_TRUNCATE = 3,
  K_FALLOCATE = 4,
  K_SYNC = 5,
  K_SYNCALL = 6,
  K_RENAME = 7,
  K_UNLINK = 8,
  K_MKDIR = 9,
  K_RMDIR = 10,
  K_LINK = 11,
  K_MMAP = 12,
  K_UNMODELLED = 13,
  K_OUTSIDE = 14,
  K_MARK = 15,
  K_OVERFLOW = 16,
  K_HELLO = 17,
  K_READ = 18,
  K_HAZARD = 19,
};
// F_SYNCHRONOUS: a pwritev2 with RWF_DSYNC or RWF_SYNC (durable when it returns).
enum { F_COUNTED = 1, F_FAILED = 2, F_INJECTED = 4, F_SYNCHRONOUS = 8 };
// CLASS_READ is never a crash point: only FSREC_FAIL_KIND read counts reads.
enum { CLASS_NONE = 0, CLASS_WRITE = 1, CLASS_SYNC = 2, CLASS_NAME = 3, CLASS_READ = 4 };
enum { SYNC_FSYNC = 0, SYNC_FDATASYNC = 1, SYNC_RANGE = 2, SYNC_MSYNC = 3 };

#define MAGIC 0x31525346u /* "FSR1" */
#define FD_MAX 65536
#define MAP_MAX 64

struct header {
  uint32_t magic;
  uint8_t kind;
  uint8_t flags;
  uint16_t path_len;
  uint32_t seq;
  uint32_t handle;
  int64_t a;
  int64_t b;
  int32_t extra;
  uint32_t data_len;
};

struct handle {
  uint32_t id;
  int refs;
  int mark;
  int shm; // SQLite's WAL index: mapped, rebuilt on open, never durable state
  int forked_use; // a forked child's use of it was logged (once per handle)
  dev_t dev;
  ino_t ino;
  char path[];
};

static int (*real_open)(const char *, int, ...);
static int (*real_openat)(int, const char *, int, ...);
static int (*real_close)(int);
static int (*real_dup)(int);
static int (*real_dup2)(int, int);
static int (*real_dup3)(int, int, int);
static int (*real_fcntl)(int, int, ...);
static int (*real_flock)(int, int);
static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_pwrite64)(int, const void *, size_t, off_t);
static ssize_t (*real_writev)(int, const struct iovec *, int);
static ssize_t (*real_pwritev64)(int, const struct iovec *, int, off_t);
static ssize_t (*real_pwritev64v2)(int, const struct iovec *, int, off_t, int);
static int (*real_truncate64)(const char *, off_t);
static int (*real_ftruncate64)(int, off_t);
static int (*real_fallocate64)(int, int, off_t, off_t);
static int (*real_posix_fallocate64)(int, off_t, off_t);
static int (*real_fsync)(int);
static int (*real_fdatasync)(int);
static int (*real_sync_file_range)(int, off_t, off_t, unsigned int);
static int (*real_msync)(void *, size_t, int);
static int (*real_syncfs)(int);
static void (*real_sync)(void);
static int (*real_renameat2)(int, const char *, int, const char *, unsigned int);
static int (*real_unlinkat)(int, const char *, int);
static int (*real_mkdirat)(int, const char *, mode_t);
static int (*real_linkat)(int, const char *, int, const char *, int);
static int (*real_symlinkat)(const char *, int, const char *);
static void *(*real_mmap64)(void *, size_t, int, int, int, off_t);
static ssize_t (*real_copy_file_range)(int, off_t *, int, off_t *, size_t, unsigned int);
static ssize_t (*real_sendfile64)(int, int, off_t *, size_t);
static FILE *(*real_fopen64)(const char *, const char *);
static ssize_t (*real_read)(int, void *, size_t);
static ssize_t (*real_pread64)(int, void *, size_t, off_t);
static ssize_t (*real_readv)(int, const struct iovec *, int);
static ssize_t (*real_preadv64)(int, const struct iovec *, int, off_t);

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int active;
static int log_fd = -1;
static int keep_data;
static char watch[PATH_MAX];
static size_t watch_len;
static char mark_path[PATH_MAX];
static char ignore[4096];
static char ignore_separator = ':';
static uint64_t max_bytes = 256ull << 20;
static uint64_t log_bytes;
static int overflowed;
static uint32_t seq;
static uint32_t next_handle = 1;
static uint64_t crash_at;
static int crash_class = CLASS_NONE;
static uint64_t counted;
static uint64_t arm_marks;
static uint64_t marks_seen;
static uint64_t *shared_marks; // every process's marks, when armed (see FSREC_ARM_MARKS)
static uint64_t stop_at;
static uint64_t locks_counted;
static char stop_file[PATH_MAX];
static int stop_on_writes;
static uint64_t writes_counted;
static char refused_file[PATH_MAX];
static char refused_name_file[PATH_MAX + 8];
static uint64_t fail_at;
static int fail_class = CLASS_NONE;
static int fail_errno = EIO;
static uint64_t fail_count = 1;
static int fail_short;
static uint64_t fail_counted;
static char fail_file[256];
static struct handle *fds[FD_MAX];
static struct {
  uintptr_t start;
  size_t len;
  uint32_t handle;
} maps[MAP_MAX];

static void hazard_start(void); // fs_recorder_hazard.c: owner pid, fork handlers

#define LOAD(name, symbol) name = dlsym(RTLD_NEXT, symbol)

// Reads FSREC_FAIL_*: an unknown kind leaves injection off (the log then shows none).
static void fault_options(void) {
  const char *at = getenv("FSREC_FAIL_AT");
  if (at) fail_at = strtoull(at, NULL, 10);
  const char *kind = getenv("FSREC_FAIL_KIND");
  if (kind && strcmp(kind, "write") == 0) fail_class = CLASS_WRITE;
  else if (kind && strcmp(kind, "sync") == 0) fail_class = CLASS_SYNC;
  else if (kind && strcmp(kind, "read") == 0) fail_class = CLASS_READ;
  if (fail_class == CLASS_NONE) fail_at = 0;
  const char *err = getenv("FSREC_FAIL_ERRNO");
  if (err && strcmp(err, "ENOSPC") == 0) fail_errno = ENOSPC;
  else if (err && strcmp(err, "EDQUOT") == 0) fail_errno = EDQUOT;
  else if (err && strcmp(err, "EIO") != 0 && atoi(err) > 0) fail_errno = atoi(err);
  const char *n = getenv("FSREC_FAIL_COUNT");
  if (n) fail_count = strtoull(n, NULL, 10);
  const char *shortened = getenv("FSREC_FAIL_SHORT");
  fail_short = shortened && shortened[0] == '1';
  const char *file = getenv("FSREC_FAIL_FILE");
  if (file) snprintf(fail_file, sizeof fail_file, "%s", file);
}

static void init(void) {
  LOAD(real_open, "open64");
  LOAD(real_openat, "openat64");
  LOAD(real_close, "close");
  LOAD(real_dup, "dup");
  LOAD(real_dup2, "dup2");
  LOAD(real_dup3, "dup3");
  LOAD(real_fcntl, "fcntl64");
  if (!real_fcntl) LOAD(real_fcntl, "fcntl");
  LOAD(real_flock, "flock");
  LOAD(real_write, "write");
  LOAD(real_pwrite64, "pwrite64");
  LOAD(real_writev, "writev");
  LOAD(real_pwritev64, "pwritev64");
  LOAD(real_pwritev64v2, "pwritev64v2");
  LOAD(real_truncate64, "truncate64");
  LOAD(real_ftruncate64, "ftruncate64");
  LOAD(real_fallocate64, "fallocate64");
  LOAD(real_posix_fallocate64, "posix_fallocate64");
  LOAD(real_fsync, "fsync");
  LOAD(real_fdatasync, "fdatasync");
  LOAD(real_sync_file_range, "sync_file_range");
  LOAD(real_msync, "msync");
  LOAD(real_syncfs, "syncfs");
  LOAD(real_sync, "sync");
  LOAD(real_renameat2, "renameat2");
  LOAD(real_unlinkat, "unlinkat");
  LOAD(real_mkdirat, "mkdirat");
  LOAD(real_linkat, "linkat");
  LOAD(real_symlinkat, "symlinkat");
  LOAD(real_mmap64, "mmap64");
  LOAD(real_copy_file_range, "copy_file_range");
  LOAD(real_sendfile64, "sendfile64");
  LOAD(real_fopen64, "fopen64");
  LOAD(real_read, "read");
  LOAD(real_pread64, "pread64");
  LOAD(real_readv, "readv");
  LOAD(real_preadv64, "preadv64");

  const char *dir = getenv("FSREC_DIR");
  const char *log = getenv("FSREC_LOG");
  if (!dir || !log || dir[0] != '/') return;
  snprintf(watch, sizeof watch, "%s", dir);
  watch_len = strlen(watch);
  while (watch_len > 1 && watch[watch_len - 1] == '/') watch[--watch_len] = 0;
  const char *mark = getenv("FSREC_MARK");
  if (mark) snprintf(mark_path, sizeof mark_path, "%s", mark);
  const char *ign = getenv("FSREC_IGNORE");
  if (ign) snprintf(ignore, sizeof ignore, "%s", ign);
  // Newline-separated when there is one: a folder's path may hold a colon.
  if (strchr(ignore, '\n')) ignore_separator = '\n';
  const char *data = getenv("FSREC_DATA");
  keep_data = data && data[0] == '1';
  const char *max = getenv("FSREC_MAX_BYTES");
  if (max) max_bytes = strtoull(max, NULL, 10);
  const char *at = getenv("FSREC_CRASH_AT");
  if (at) crash_at = strtoull(at, NULL, 10);
  const char *stop = getenv("FSREC_STOP_AT");
  if (stop) stop_at = strtoull(stop, NULL, 10);
  const char *stop_path = getenv("FSREC_STOP_FILE");
  if (stop_path) snprintf(stop_file, sizeof stop_file, "%s", stop_path);
  const char *stop_kind = getenv("FSREC_STOP_KIND");
  stop_on_writes = stop_kind && strcmp(stop_kind, "write") == 0;
  const char *refused = getenv("FSREC_REFUSED_FILE");
  if (refused) {
    snprintf(refused_file, sizeof refused_file, "%s", refused);
    snprintf(refused_name_file, sizeof refused_name_file, "%s.name", refused);
  }
  const char *arm = getenv("FSREC_ARM_MARKS");
  if (arm) arm_marks = strtoull(arm, NULL, 10);
  const char *kind = getenv("FSREC_CRASH_KIND");
  if (kind && strcmp(kind, "write") == 0) crash_class = CLASS_WRITE;
  else if (kind && strcmp(kind, "sync") == 0) crash_class = CLASS_SYNC;
  else if (kind && strcmp(kind, "name") == 0) crash_class = CLASS_NAME;
  fault_options();
  log_fd = real_open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) return;
  // Keep the log's descriptor out of the range a program's own descriptors take.
  int high = real_fcntl(log_fd, F_DUPFD_CLOEXEC, 1000);
  if (high >= 0) {
    real_close(log_fd);
    log_fd = high;
  }
  struct stat st;
  if (fstat(log_fd, &st) == 0) log_bytes = (uint64_t)st.st_size;
  if (arm_marks && mark_path[0]) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s.marks", log);
    int fd = real_open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0 && real_ftruncate64(fd, sizeof *shared_marks) == 0) {
      void *p = real_mmap64(NULL, sizeof *shared_marks, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      if (p != MAP_FAILED) shared_marks = p;
    }
    if (fd >= 0) real_close(fd);
  }
  active = 1;
  hazard_start();
}

// The marks written so far: by every process of the log when armed, else by this one.
static uint64_t marks_now(void) {
  return shared_marks ? __atomic_load_n(shared_marks, __ATOMIC_SEQ_CST) : marks_seen;
}

__attribute__((constructor)) static void start(void) {
  pthread_once(&once, init);
  if (active) {
    struct header h = {MAGIC, K_HELLO, 0, (uint16_t)watch_len, 0, 0, getpid(), 0, 0, 0};
    struct iovec iov[2] = {{&h, sizeof h}, {watch, watch_len}};
    pthread_mutex_lock(&lock);
    h.seq = seq++;
    ssize_t n = syscall(SYS_writev, log_fd, iov, 2);
    if (n > 0) log_bytes += (uint64_t)n;
    pthread_mutex_unlock(&lock);
  }
}

#define ENSURE() pthread_once(&once, init)

// Appends one record; the caller holds the lock. Data comes as iovecs (a write's buffers).
static void emit(int kind, int flags, const char *path, size_t path_len, uint32_t handle,
                 int64_t a, int64_t b, int32_t extra, const struct iovec *data, int data_count,
                 size_t data_len) {
  if (overflowed) return;
  struct header h = {MAGIC, (uint8_t)kind, (uint8_t)flags, (uint16_t)path_len, seq, handle,
                     a, b, extra, (uint32_t)data_len};
  uint64_t size = sizeof h + path_len + data_len;
  if (log_bytes + size > max_bytes || data_len > UINT32_MAX) {
    struct header o = {MAGIC, K_OVERFLOW, 0, 0, seq, 0, (int64_t)log_bytes, (int64_t)size, 0,
                       0};
    syscall(SYS_write, log_fd, &o, sizeof o);
    overflowed = 1;
    return;
  }
  seq++;
  struct iovec iov[64];
  int n = 0;
  iov[n++] = (struct iovec){&h, sizeof h};
  if (path_len) iov[n++] = (struct iovec){(void *)path, path_len};
  size_t left = data_len;
  for (int i = 0; i < data_count && left > 0 && n < 64; i++) {
    size_t take = data[i].iov_len < left ? data[i].iov_len : left;
    if (take) iov[n++] = (struct iovec){data[i].iov_base, take};
    left -= take;
  }
  if (left > 0) {
    // More buffers than one writev takes: record that the call cannot be modelled.
    h.kind = K_UNMODELLED;
    h.path_len = 0;
    h.data_len = 0;
    n = 1;
  }
  // A short append (disk full) leaves a torn record; the reader reports it.
  ssize_t w = syscall(SYS_writev, log_fd, iov, n);
  if (w > 0) log_bytes += (uint64_t)w;
}

static void emit_simple(int kind, int flags, const char *path, uint32_t handle, int64_t a,
                        int64_t b, int32_t extra) {
  emit(kind, flags, path, path ? strlen(path) : 0, handle, a, b, extra, NULL, 0, 0);
}

static void touch(const char *path) {
  int made = real_openat(AT_FDCWD, path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (made >= 0) real_close(made);
}

// Creates the stop file, then stops the process (directed at this thread, so the stop
// takes effect before the call that follows is made).
static void stop_self(void) {
  if (stop_file[0]) touch(stop_file);
  syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), SIGSTOP);
}

// Counts a call of class `cls` and kills the process when it is the configured k-th.
// The caller holds the lock (held across a stop too: the process is stopped whole).
static void count(int cls) {
  if (cls == CLASS_NONE) return;
  if (arm_marks && marks_now() != arm_marks) return;
  if (stop_on_writes && stop_at && ++writes_counted == stop_at) stop_self();
  if (crash_class != CLASS_NONE && cls != crash_class) return;
  counted++;
  if (crash_at && counted == crash_at) {
    syscall(SYS_kill, getpid(), SIGKILL);
    for (;;) pause();
  }
}

// Lexically normalises an absolute path in place ("." and ".." and repeated slashes).
static void normalise(char *path) {
  char *out = path;
  const char *in = path;
  while (*in) {
    while (*in == '/') in++;
    const char *start = in;
    while (*in && *in != '/') in++;
    size_t len = (size_t)(in - start);
    if (len == 0) break;
    if (len == 1 && start[0] == '.') continue;
    if (len == 2 && start[0] == '.' && start[1] == '.') {
      while (out > path && *(out - 1) != '/') out--;
      if (out > path) out--;
      continue;
    }
    *out++ = '/';
    memmove(out, start, len);
    out += len;
  }
  if (out == path) *out++ = '/';
  *out = 0;
}

// Resolves `path` relative to `dirfd` into `out` (absolute, normalised).
static int resolve(int dirfd, const char *path, char *out) {
  if (!path) return -1;
  if (path[0] == '/') {
    snprintf(out, PATH_MAX, "%s", path);
  } else {
    char base[PATH_MAX];
    if (dirfd == AT_FDCWD) {
      if (!getcwd(base, sizeof base)) return -1;
    } else if (dirfd >= 0 && dirfd < FD_MAX && fds[dirfd]) {
      snprintf(base, sizeof base, "%s", fds[dirfd]->path);
    } else {
      char link[64];
      snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
      ssize_t n = readlink(link, base, sizeof base - 1);
      if (n < 0) return -1;
      base[n] = 0;
    }
    if (snprintf(out, PATH_MAX, "%s/%s", base, path) >= PATH_MAX) return -1;
  }
  normalise(out);
  return 0;
}

static int under(const char *path, const char *dir, size_t len) {
  return len && strncmp(path, dir, len) == 0 && (path[len] == 0 || path[len] == '/');
}

static int watched(const char *path) { return under(path, watch, watch_len); }

static int is_shm(const char *path) {
  size_t n = strlen(path);
  return n > 4 && strcmp(path + n - 4, "-shm") == 0;
}

static int ignored(const char *path) {
  static const char *system[] = {"/dev", "/proc", "/sys", "/run"};
  for (size_t i = 0; i < sizeof system / sizeof *system; i++)
    if (under(path, system[i], strlen(system[i]))) return 1;
  if (mark_path[0] && strcmp(path, mark_path) == 0) return 1;
  const char *p = ignore;
  while (*p) {
    const char *end = strchr(p, ignore_separator);
    size_t len = end ? (size_t)(end - p) : strlen(p);
    while (len > 1 && p[len - 1] == '/') len--;
    if (under(path, p, len)) return 1;
    if (!end) break;
    p = end + 1;
  }
  return 0;
}

static void set_fd(int fd, struct handle *h) {
  if (fd < 0 || fd >= FD_MAX) return;
  struct handle *old = fds[fd];
  if (old == h) return;
  if (h) h->refs++;
  fds[fd] = h;
  if (old && --old->refs == 0) free(old);
}

static struct handle *lookup(int fd) {
  if (!active || fd < 0 || fd >= FD_MAX) return NULL;
  return __atomic_load_n(&fds[fd], __ATOMIC_ACQUIRE);
}

// A tracked descriptor; in a forked child before exec, its use is a hazard, logged with
// the interposer's name.
static struct handle *tracked_in(int fd, const char *func);
#define tracked(fd) tracked_in(fd, __func__)

// The interposers are in the other parts of this one translation unit, kept in their own
// files for size: hazards; descriptors and locks; injected faults and reads; writes, truncates,
// syncs, names and mappings.
#include "fs_recorder_hazard.c"
#include "fs_recorder_fd.c"
#include "fs_recorder_fault.c"
#include "fs_recorder_io.c"
