// fs_recorder, part one: the hazards a store's own process commits, each logged as a
// `hazard` record just before the call that commits it (recorder/log.ts names them):
//   1 a close of a descriptor of a watched file while the process holds fcntl (POSIX)
//     locks on the file and another of its descriptors is open on it: the kernel drops
//     every lock the process holds on the file. OFD locks belong to their open file
//     description and survive, so they are not one. SQLite defers such a close itself.
//   2 a second, distinct SQLite library (another `sqlite3_open_v2`) loaded by dlopen in a
//     process that opens a watched file: two libraries keep two lock tables, so each
//     drops the other's locks. A SQLite linked into the executable (Deno's own) is not
//     loaded by dlopen and is not seen: a store mixing it with another on one file is
//     named only by the closes that drop the other's locks (1).
//   3 a call on an inherited descriptor of a watched file in a child forked with it
//     open, before exec: the child shares the parent's file offsets and locks nothing.
//   4 an unlink or rename of a watched file (or over one) while another process has it
//     open, found in /proc/<pid>/fd: that process goes on with a file nobody can reach.
//     Looked for only under FSREC_PULLED=1.
// Included by fs_recorder.c (one translation unit), not compiled on its own.
#include <dirent.h>
#include <link.h>

enum { H_LOCK_DROP = 1, H_SECOND_SQLITE = 2, H_FORK_USE = 3, H_PULLED = 4 };

static pid_t owner_pid;
static int fork_child;
static int max_fd = -1;
static int opened_watched;
static void *first_sqlite;
static char first_sqlite_path[PATH_MAX];
static char second_sqlite_path[PATH_MAX];
static int second_sqlite_pending;
// FSREC_PULLED=1: look for other holders before an unlink or rename (4). A scan of every
// process's descriptors per call, so only a run that judges pulled files asks for it.
static int scan_pulled;

// Caller holds the lock. `path2` is the call's name, or the first library's path.
static void emit_hazard(int code, const char *path, const char *path2, uint32_t handle,
                        int64_t b, int32_t extra) {
  char both[2 * PATH_MAX + 1];
  size_t la = strlen(path), lb = strlen(path2);
  memcpy(both, path, la);
  both[la] = 0;
  memcpy(both + la + 1, path2, lb);
  emit(K_HAZARD, 0, both, la + 1 + lb, handle, code, b, extra, NULL, 0, 0);
}

// Whether POSIX locks were taken through the descriptor's open file description by this
// process: its "lock:" lines in /proc/self/fdinfo (OFD locks show as OFDLCK and do not
// count). The kernel's own view, so ranges need not be tracked here.
static int holds_posix_locks(int fd) {
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fdinfo/%d", fd);
  int info = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
  if (info < 0) return 0;
  static char buf[1 << 14];
  ssize_t n = syscall(SYS_read, info, buf, sizeof buf - 1);
  syscall(SYS_close, info);
  if (n <= 0) return 0;
  buf[n] = 0;
  for (char *line = strstr(buf, "lock:"); line; line = strstr(line + 5, "lock:")) {
    char *eol = strchr(line, '\n');
    if (eol) *eol = 0;
    int posix = strstr(line, "POSIX") != NULL && strstr(line, "->") == NULL;
    if (eol) *eol = '\n';
    if (posix) return 1;
  }
  return 0;
}

// Called by close() for a tracked descriptor; the caller holds the lock.
static void close_hazard(int fd, struct handle *h) {
  if (h->mark || !h->ino) return;
  for (int o = 0; o <= max_fd; o++) {
    struct handle *x = fds[o];
    if (o == fd || !x || x->mark || x->dev != h->dev || x->ino != h->ino) continue;
    if (!holds_posix_locks(o)) continue;
    emit_hazard(H_LOCK_DROP, h->path, "close", h->id, x->id, o);
    return;
  }
}

// Fills dev/ino of a watched handle and keeps the highest tracked descriptor.
static void note_open(int fd, struct handle *h) {
  struct stat st;
  if (fstat(fd, &st) == 0) {
    h->dev = st.st_dev;
    h->ino = st.st_ino;
  }
  if (fd > max_fd) max_fd = fd;
  if (h->mark) return;
  opened_watched = 1;
  if (second_sqlite_pending) {
    second_sqlite_pending = 0;
    emit_hazard(H_SECOND_SQLITE, second_sqlite_path, first_sqlite_path, 0, 0, 0);
  }
}

// The name of the interposer that called tracked(), without the helpers' suffixes.
static void call_name(const char *func, char *out, size_t size) {
  static const char *suffixes[] = {"_common", "_fails", "_into", "_seen"};
  snprintf(out, size, "%s", func);
  size_t n = strlen(out);
  for (size_t i = 0; i < sizeof suffixes / sizeof *suffixes; i++) {
    size_t s = strlen(suffixes[i]);
    if (n > s && strcmp(out + n - s, suffixes[i]) == 0) out[n - s] = 0;
  }
  if (strcmp(out, "stop_before_lock") == 0) snprintf(out, size, "fcntl");
}

static struct handle *tracked_in(int fd, const char *func) {
  struct handle *h = lookup(fd);
  if (!h || !fork_child || h->mark || h->forked_use) return h;
  char name[64];
  call_name(func, name, sizeof name);
  pthread_mutex_lock(&lock);
  h->forked_use = 1;
  emit_hazard(H_FORK_USE, h->path, name, h->id, getpid(), owner_pid);
  pthread_mutex_unlock(&lock);
  return h;
}

static void fork_prepare(void) { pthread_mutex_lock(&lock); }
static void fork_parent(void) { pthread_mutex_unlock(&lock); }
static void fork_child_starts(void) {
  pthread_mutex_unlock(&lock);
  fork_child = 1;
}
static void hazard_start(void) {
  owner_pid = getpid();
  const char *pulled = getenv("FSREC_PULLED");
  scan_pulled = pulled && pulled[0] == '1';
  pthread_atfork(fork_prepare, fork_parent, fork_child_starts);
}

// Another process with `st`'s file open: its pid, and the descriptor in *fd_out; 0 if none.
static pid_t other_holder(const char *path, const struct stat *st, int *fd_out) {
  int proc = (int)syscall(SYS_openat, AT_FDCWD, "/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (proc < 0) return 0;
  static char dents[1 << 15], sub[1 << 14];
  pid_t self = getpid(), found = 0;
  long n;
  while (!found && (n = syscall(SYS_getdents64, proc, dents, sizeof dents)) > 0) {
    for (long at = 0; at < n && !found;) {
      struct dirent64 *d = (struct dirent64 *)(dents + at);
      at += d->d_reclen;
      pid_t pid = (pid_t)atoi(d->d_name);
      if (pid <= 0 || pid == self) continue;
      char dir[64];
      snprintf(dir, sizeof dir, "/proc/%d/fd", pid);
      int fdir = (int)syscall(SYS_openat, AT_FDCWD, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (fdir < 0) continue;
      long m;
      while (!found && (m = syscall(SYS_getdents64, fdir, sub, sizeof sub)) > 0) {
        for (long bt = 0; bt < m && !found;) {
          struct dirent64 *e = (struct dirent64 *)(sub + bt);
          bt += e->d_reclen;
          char target[PATH_MAX];
          ssize_t len = readlinkat(fdir, e->d_name, target, sizeof target - 1);
          if (len <= 0) continue;
          target[len] = 0;
          struct stat other;
          if (strcmp(target, path) != 0 || fstatat(fdir, e->d_name, &other, 0) != 0) continue;
          if (other.st_dev == st->st_dev && other.st_ino == st->st_ino) {
            found = pid;
            *fd_out = atoi(e->d_name);
          }
        }
      }
      syscall(SYS_close, fdir);
    }
  }
  syscall(SYS_close, proc);
  return found;
}

// Before an unlink or a rename: each watched regular file it removes or moves that
// another process has open is a hazard, logged under the lock.
static void pulled_hazards(const char *call, const char *a, const char *b) {
  if (!scan_pulled) return;
  const char *paths[2] = {a, b};
  for (int i = 0; i < 2; i++) {
    struct stat st;
    if (!paths[i] || !paths[i][0] || !watched(paths[i]) || stat(paths[i], &st) != 0 ||
        !S_ISREG(st.st_mode))
      continue;
    int fd = -1;
    pid_t pid = other_holder(paths[i], &st, &fd);
    if (!pid) continue;
    pthread_mutex_lock(&lock);
    emit_hazard(H_PULLED, paths[i], call, 0, pid, fd);
    pthread_mutex_unlock(&lock);
  }
}

// A library dlopen loaded: the first SQLite is remembered; a distinct second one is a
// hazard once the process opens a watched file (at once when it already has).
static void note_library(void *handle) {
  void *sym = dlsym(handle, "sqlite3_open_v2");
  if (!sym || sym == first_sqlite) return;
  Dl_info info;
  const char *name = dladdr(sym, &info) && info.dli_fname ? info.dli_fname : "?";
  pthread_mutex_lock(&lock);
  if (!first_sqlite) {
    first_sqlite = sym;
    snprintf(first_sqlite_path, sizeof first_sqlite_path, "%s", name);
  } else if (!second_sqlite_path[0]) {
    snprintf(second_sqlite_path, sizeof second_sqlite_path, "%s", name);
    if (opened_watched) emit_hazard(H_SECOND_SQLITE, name, first_sqlite_path, 0, 0, 0);
    else second_sqlite_pending = 1;
  }
  pthread_mutex_unlock(&lock);
}

void *dlopen(const char *file, int mode) {
  ENSURE();
  static void *(*real_dlopen)(const char *, int);
  if (!real_dlopen) real_dlopen = dlsym(RTLD_NEXT, "dlopen");
  void *h = real_dlopen(file, mode);
  if (h && active) note_library(h);
  return h;
}
