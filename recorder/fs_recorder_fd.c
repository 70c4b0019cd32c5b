// fs_recorder, part two: the descriptor interposers (opens, closes, dups, fcntl and its
// lock calls); included by fs_recorder.c (one translation unit, so it shares the
// recorder's static state), not compiled on its own.
static void stop_before_name_lock(void);
static void name_lock_refused(int err);

static int open_common(int dirfd, const char *path, int flags, mode_t mode) {
  ENSURE();
  if (!active) return real_openat(dirfd, path, flags, mode);
  char full[PATH_MAX];
  int known = resolve(dirfd, path, full) == 0;
  int watch_it = known && watched(full);
  int is_mark = known && mark_path[0] && strcmp(full, mark_path) == 0;
  if (!watch_it && !is_mark) {
    int fd = real_openat(dirfd, path, flags, mode);
    int outside = (flags & (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC)) && !(known && ignored(full));
    if (fd >= 0 && (outside || tracked(fd))) {
      int err = errno;
      pthread_mutex_lock(&lock);
      set_fd(fd, NULL);
      if (outside) emit_simple(K_OUTSIDE, 0, known ? full : path, 0, flags, 0, 0);
      pthread_mutex_unlock(&lock);
      errno = err;
    }
    return fd;
  }
  // An exclusive create is how a store takes a lock file of its own.
  int exclusive = watch_it && (flags & O_CREAT) && (flags & O_EXCL);
  if (exclusive) stop_before_name_lock();
  pthread_mutex_lock(&lock);
  int shm = is_shm(full);
  int creates = watch_it && !shm && (flags & (O_CREAT | O_TRUNC));
  if (creates) count(CLASS_NAME);
  // Whether the open makes a new name (its folder must be synced for the name to last):
  // the file was missing just before, under the recorder's lock.
  struct stat before;
  int made = watch_it && (flags & O_CREAT) &&
             syscall(SYS_newfstatat, dirfd, path, &before, 0) != 0;
  int fd = real_openat(dirfd, path, flags, mode);
  int err = errno;
  if (fd >= 0) {
    struct handle *h = malloc(sizeof *h + strlen(full) + 1);
    h->id = next_handle++;
    h->refs = 0;
    h->mark = is_mark;
    h->shm = shm;
    strcpy(h->path, full);
    h->forked_use = 0;
    h->dev = 0;
    h->ino = 0;
    set_fd(fd, h);
    note_open(fd, h);
    if (watch_it) emit_simple(K_OPEN, creates ? F_COUNTED : 0, full, h->id, flags, mode, made);
  } else if (creates) {
    emit_simple(K_OPEN, F_COUNTED | F_FAILED, full, 0, flags, mode, err);
  }
  pthread_mutex_unlock(&lock);
  if (exclusive && fd < 0) name_lock_refused(err);
  errno = err;
  return fd;
}

static mode_t mode_of(int flags, va_list ap) {
  return (flags & (O_CREAT | __O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0;
}

int open(const char *path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  mode_t mode = mode_of(flags, ap);
  va_end(ap);
  return open_common(AT_FDCWD, path, flags, mode);
}
int open64(const char *path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  mode_t mode = mode_of(flags, ap);
  va_end(ap);
  return open_common(AT_FDCWD, path, flags, mode);
}
int openat(int dirfd, const char *path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  mode_t mode = mode_of(flags, ap);
  va_end(ap);
  return open_common(dirfd, path, flags, mode);
}
int openat64(int dirfd, const char *path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  mode_t mode = mode_of(flags, ap);
  va_end(ap);
  return open_common(dirfd, path, flags, mode);
}
int __open_2(const char *path, int flags) { return open_common(AT_FDCWD, path, flags, 0); }
int __open64_2(const char *path, int flags) { return open_common(AT_FDCWD, path, flags, 0); }
int __openat_2(int d, const char *path, int flags) { return open_common(d, path, flags, 0); }
int __openat64_2(int d, const char *path, int flags) { return open_common(d, path, flags, 0); }
int creat(const char *path, mode_t mode) {
  return open_common(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode);
}
int creat64(const char *path, mode_t mode) {
  return open_common(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode);
}

FILE *fopen64(const char *path, const char *how) {
  ENSURE();
  char full[PATH_MAX];
  if (active && strpbrk(how, "wa+") && resolve(AT_FDCWD, path, full) == 0 && watched(full)) {
    // stdio writes through glibc's own descriptors: unseen, so not modellable.
    pthread_mutex_lock(&lock);
    emit_simple(K_UNMODELLED, 0, full, 0, 0, 0, 0);
    pthread_mutex_unlock(&lock);
  }
  return real_fopen64(path, how);
}
FILE *fopen(const char *path, const char *how) { return fopen64(path, how); }

int close(int fd) {
  ENSURE();
  struct handle *h = lookup(fd);
  if (h) {
    pthread_mutex_lock(&lock);
    close_hazard(fd, h);
    set_fd(fd, NULL);
    pthread_mutex_unlock(&lock);
  }
  return real_close(fd);
}

static int dup_into(int from, int to) {
  if (to >= 0 && active && (tracked(from) || tracked(to))) {
    pthread_mutex_lock(&lock);
    set_fd(to, from >= 0 && from < FD_MAX ? fds[from] : NULL);
    if (to > max_fd) max_fd = to;
    pthread_mutex_unlock(&lock);
  }
  return to;
}
int dup(int fd) {
  ENSURE();
  return dup_into(fd, real_dup(fd));
}
int dup2(int fd, int to) {
  ENSURE();
  int r = real_dup2(fd, to);
  return r < 0 ? r : dup_into(fd, r);
}
int dup3(int fd, int to, int flags) {
  ENSURE();
  int r = real_dup3(fd, to, flags);
  return r < 0 ? r : dup_into(fd, r);
}
// Stops the process just before the FSREC_STOP_AT-th armed lock call on a watched file.
static void stop_before_lock_on(int fd);
static int lock_call(int cmd) {
  return cmd == F_SETLK || cmd == F_SETLKW || cmd == F_OFD_SETLK || cmd == F_OFD_SETLKW;
}

static void stop_before_lock(int fd, int cmd) {
  if (!lock_call(cmd) || stop_on_writes) return;
  stop_before_lock_on(fd);
}

// Counts a lock call while armed and stops the process before the FSREC_STOP_AT-th. The
// mutex is released first: the process must be able to go on once it is continued.
static void count_lock_call(void) {
  pthread_mutex_lock(&lock);
  int stop = (!arm_marks || marks_now() == arm_marks) && ++locks_counted == stop_at;
  pthread_mutex_unlock(&lock);
  if (stop) stop_self();
}

// A lock call on fd (fcntl's or flock's): the process stops before the FSREC_STOP_AT-th.
static void stop_before_lock_on(int fd) {
  struct handle *h = tracked(fd);
  if (!h || h->mark) return;
  count_lock_call();
}

// A name made only if it is missing (mkdir, link, a rename onto it, an O_EXCL open) is
// how a store takes a lock file or folder of its own (a lock directory, a pid file): a lock
// call like fcntl's. The process stops before the FSREC_STOP_AT-th, and one that fails
// because the name exists is a refusal: another process holds that lock.
static void stop_before_name_lock(void) {
  if (stop_at && !stop_on_writes) count_lock_call();
}

static void name_lock_refused(int err) {
  if (!refused_file[0] || (err != EEXIST && err != ENOTEMPTY)) return;
  if (arm_marks && marks_now() != arm_marks) return;
  touch(refused_file);
  touch(refused_name_file);
}

// A lock request on a watched file while armed, with FSREC_REFUSED_FILE set: a refusal
// creates the file; a blocking request is tried without waiting first, so that a wait
// shows as a refusal before it begins. Returns 1 with *r set when the call was made here.
static int lock_seen(int fd, int cmd, void *arg, int *r) {
  if (!refused_file[0] || !lock_call(cmd) || !arg) return 0;
  struct handle *h = tracked(fd);
  if (!h || h->mark || ((struct flock *)arg)->l_type == F_UNLCK) return 0;
  if (arm_marks && marks_now() != arm_marks) return 0;
  int blocking = cmd == F_SETLKW || cmd == F_OFD_SETLKW;
  *r = real_fcntl(fd, cmd == F_SETLKW ? F_SETLK : cmd == F_OFD_SETLKW ? F_OFD_SETLK : cmd, arg);
  if (*r == 0 || (errno != EAGAIN && errno != EACCES)) return 1;
  int err = errno;
  touch(refused_file);
  if (blocking) *r = real_fcntl(fd, cmd, arg);
  else errno = err;
  return 1;
}

static int fcntl_common(int fd, int cmd, void *arg) {
  ENSURE();
  if (stop_at) stop_before_lock(fd, cmd);
  int r;
  if (lock_seen(fd, cmd, arg, &r)) return r;
  r = real_fcntl(fd, cmd, arg);
  if (r >= 0 && (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC)) dup_into(fd, r);
  return r;
}
int fcntl(int fd, int cmd, ...) {
  va_list ap;
  va_start(ap, cmd);
  void *arg = va_arg(ap, void *);
  va_end(ap);
  return fcntl_common(fd, cmd, arg);
}
int fcntl64(int fd, int cmd, ...) {
  va_list ap;
  va_start(ap, cmd);
  void *arg = va_arg(ap, void *);
  va_end(ap);
  return fcntl_common(fd, cmd, arg);
}

// flock is a lock call like fcntl's: a store that serialises its processes with a lock
// file of its own is stopped before it, and a wait on it is seen as a refusal.
int flock(int fd, int op) {
  ENSURE();
  if (stop_at && !stop_on_writes) stop_before_lock_on(fd);
  if (!refused_file[0] || (op & LOCK_UN) || (arm_marks && marks_now() != arm_marks)) {
    return real_flock(fd, op);
  }
  struct handle *h = tracked(fd);
  if (!h || h->mark) return real_flock(fd, op);
  int r = real_flock(fd, op | LOCK_NB);
  if (r == 0 || errno != EWOULDBLOCK) return r;
  int err = errno;
  touch(refused_file);
  if (!(op & LOCK_NB)) return real_flock(fd, op);
  errno = err;
  return r;
}
