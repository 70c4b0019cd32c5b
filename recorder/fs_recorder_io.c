// fs_recorder, part four: the data and sync interposers (writes, truncates, syncs, names,
// mappings); included by fs_recorder.c at its end (one translation unit, so it shares the
// recorder's static state), not compiled on its own.
static ssize_t make_write(int fd, const struct iovec *iov, int count_iov, off_t offset,
                          int flags2, int kind) {
  switch (kind) {
  case 0: return real_write(fd, iov[0].iov_base, iov[0].iov_len);
  case 1: return real_pwrite64(fd, iov[0].iov_base, iov[0].iov_len, offset);
  case 2: return real_writev(fd, iov, count_iov);
  case 3: return real_pwritev64(fd, iov, count_iov, offset);
  default: return real_pwritev64v2(fd, iov, count_iov, offset, flags2);
  }
}

// An injected write fault: the first half written (FSREC_FAIL_SHORT, 2 bytes or more),
// else nothing, failing with FSREC_FAIL_ERRNO. Sets *want to the bytes asked for.
static ssize_t faulty_write(int fd, const struct iovec *iov, int count_iov, off_t offset,
                            int flags2, int kind, size_t *want) {
  *want = iov_bytes(iov, count_iov);
  struct iovec *part = fail_short && *want >= 2 ? malloc(count_iov * sizeof *part) : NULL;
  if (part) {
    int n = trim(iov, count_iov, *want / 2, part);
    ssize_t r = make_write(fd, part, n, offset, flags2, kind);
    int err = errno;
    free(part);
    errno = err;
    return r;
  }
  errno = fail_errno;
  return -1;
}

// pwritev2's flags (linux/fs.h), for headers that lack them.
#ifndef RWF_DSYNC
#define RWF_DSYNC 0x2
#endif
#ifndef RWF_SYNC
#define RWF_SYNC 0x4
#endif
#ifndef RWF_APPEND
#define RWF_APPEND 0x10
#endif

// A write of `total` bytes at `offset` (-1: the descriptor's position, found afterwards).
static ssize_t write_common(struct handle *h, int fd, const struct iovec *iov, int count_iov,
                            off_t offset, int flags2, int kind) {
  pthread_mutex_lock(&lock);
  int fail = 0;
  if (!h->mark && !h->shm) {
    count(CLASS_WRITE);
    fail = inject(CLASS_WRITE, h->path);
  }
  size_t want = 0;
  ssize_t r = fail ? faulty_write(fd, iov, count_iov, offset, flags2, kind, &want)
                   : make_write(fd, iov, count_iov, offset, flags2, kind);
  int err = errno;
  if (r >= 0 && kind == 4 && (flags2 & RWF_APPEND) && offset != -1) {
    // Appended whatever the offset said, and the position left alone: the file ends there.
    struct stat st;
    offset = fstat(fd, &st) == 0 ? st.st_size - r : -1;
  } else if (r >= 0 && (kind == 0 || kind == 2 || offset == -1)) {
    off_t end = lseek(fd, 0, SEEK_CUR);
    offset = end >= 0 ? end - r : -1;
  } else if (r < 0 && fail && offset == -1) {
    offset = lseek(fd, 0, SEEK_CUR);
  }
  int how = (fail ? F_INJECTED : 0) |
            (kind == 4 && (flags2 & (RWF_DSYNC | RWF_SYNC)) ? F_SYNCHRONOUS : 0);
  if (h->mark) {
    if (r > 0) marks_seen++;
    if (r > 0 && shared_marks) __atomic_add_fetch(shared_marks, 1, __ATOMIC_SEQ_CST);
    if (r > 0) emit(K_MARK, 0, NULL, 0, h->id, offset, r, 0, iov, count_iov, (size_t)r);
  } else if (r < 0) {
    int flags = (h->shm ? 0 : F_COUNTED) | F_FAILED | how;
    emit_simple(K_WRITE, flags, NULL, h->id, offset, 0, err);
  } else {
    // A short write keeps the bytes it asked for in `extra`.
    size_t kept = keep_data && !h->shm ? (size_t)r : 0;
    int32_t asked = fail ? (int32_t)(want > INT32_MAX ? INT32_MAX : want) : 0;
    emit(K_WRITE, (h->shm ? 0 : F_COUNTED) | how, NULL, 0, h->id, offset, r, asked, iov,
         count_iov, kept);
  }
  pthread_mutex_unlock(&lock);
  errno = err;
  return r;
}

ssize_t write(int fd, const void *buf, size_t n) {
  ENSURE();
  struct handle *h = tracked(fd);
  if (!h) return real_write(fd, buf, n);
  struct iovec v = {(void *)buf, n};
  return write_common(h, fd, &v, 1, -1, 0, 0);
}
ssize_t pwrite64(int fd, const void *buf, size_t n, off_t offset) {
  ENSURE();
  struct handle *h = tracked(fd);
  if (!h) return real_pwrite64(fd, buf, n, offset);
  struct iovec v = {(void *)buf, n};
  return write_common(h, fd, &v, 1, offset, 0, 1);
}
ssize_t pwrite(int fd, const void *buf, size_t n, off_t offset) {
  return pwrite64(fd, buf, n, offset);
}
ssize_t writev(int fd, const struct iovec *iov, int n) {
  ENSURE();
  struct handle *h = tracked(fd);
  if (!h) return real_writev(fd, iov, n);
  return write_common(h, fd, iov, n, -1, 0, 2);
}
ssize_t pwritev64(int fd, const struct iovec *iov, int n, off_t offset) {
  ENSURE();
  struct handle *h = tracked(fd);
  if (!h) return real_pwritev64(fd, iov, n, offset);
  return write_common(h, fd, iov, n, offset, 0, 3);
}
ssize_t pwritev(int fd, const struct iovec *iov, int n, off_t offset) {
  return pwritev64(fd, iov, n, offset);
}
ssize_t pwritev64v2(int fd, const struct iovec *iov, int n, off_t offset, int flags) {
  ENSURE();
  struct handle *h = tracked(fd);
  if (!h) return real_pwritev64v2(fd, iov, n, offset, flags);
  return write_common(h, fd, iov, n, offset, flags, 4);
}
ssize_t pwritev2(int fd, const struct iovec *iov, int n, off_t offset, int flags) {
  return pwritev64v2(fd, iov, n, offset, flags);
}

int ftruncate64(int fd, off_t size) {
  ENSURE();
  struct handle *h = tracked(fd);
  if (!h) return real_ftruncate64(fd, size);
  pthread_mutex_lock(&lock);
  if (!h->shm) count(CLASS_WRITE);
  int r = real_ftruncate64(fd, size);
  int err = errno;
  int flags = (h->shm ? 0 : F_COUNTED) | (r ? F_FAILED : 0);
  emit_simple(K_TRUNCATE, flags, NULL, h->id, size, 0, r ? err : 0);
  pthread_mutex_unlock(&lock);
  errno = err;
  return r;
}
int ftruncate(int fd, off_t size) { return ftruncate64(fd, size); }

int truncate64(const char *path, off_t size) {
  ENSURE();
  char full[PATH_MAX];
  if (!active || resolve(AT_FDCWD, path, full) || !watched(full))
    return real_truncate64(path, size);
  pthread_mutex_lock(&lock);
  count(CLASS_WRITE);
  int r = real_truncate64(path, size);
  int err = errno;
  emit_simple(K_TRUNCATE, F_COUNTED | (r ? F_FAILED : 0), full, 0, size, 0, r ? err : 0);
  pthread_mutex_unlock(&lock);
  errno = err;
  return r;
}
int truncate(const char *path, off_t size) { return truncate64(path, size); }

static int fallocate_common(int fd, int mode, off_t offset, off_t len, int posix) {
  ENSURE();
  struct handle *h = tracked(fd);
  if (!h) {
    return posix ? real_posix_fallocate64(fd, offset, len)
                 : real_fallocate64(fd, mode, offset, len);
  }
  pthread_mutex_lock(&lock);
  count(CLASS_WRITE);
  int r = posix ? real_posix_fallocate64(fd, offset, len) : real_fallocate64(fd, mode, offset, len);
  int err = posix ? r : errno;
  emit_simple(K_FALLOCATE, F_COUNTED | (r ? F_FAILED : 0), NULL, h->id, offset, len,
              r ? err : mode);
  pthread_mutex_unlock(&lock);
  if (!posix) errno = err;
  return r;
}
int fallocate64(int fd, int mode, off_t offset, off_t len) {
  return fallocate_common(fd, mode, offset, len, 0);
}
int fallocate(int fd, int mode, off_t offset, off_t len) {
  return fallocate_common(fd, mode, offset, len, 0);
}
int posix_fallocate64(int fd, off_t offset, off_t len) {
  return fallocate_common(fd, 0, offset, len, 1);
}
int posix_fallocate(int fd, off_t offset, off_t len) {
  return fallocate_common(fd, 0, offset, len, 1);
}

// An fsync or fdatasync; an injected fault fails it without making it (the failed sync's
// form is then kept in `b`, its errno in `extra`).
static int sync_common(struct handle *h, int how, int r_in, int (*call)(void *), void *arg) {
  pthread_mutex_lock(&lock);
  count(CLASS_SYNC);
  int fail = inject(CLASS_SYNC, h->path);
  int r;
  if (fail) {
    r = -1;
    errno = fail_errno;
  } else {
    r = call ? call(arg) : r_in;
  }
  int err = errno;
  int flags = F_COUNTED | (r ? F_FAILED : 0) | (fail ? F_INJECTED : 0);
  emit_simple(K_SYNC, flags, NULL, h->id, 0, fail ? how : 0, r ? err : how);
  pthread_mutex_unlock(&lock);
  errno = err;
  return r;
}
static int call_fsync(void *fd) { return real_fsync((int)(intptr_t)fd); }
static int call_fdatasync(void *fd) { return real_fdatasync((int)(intptr_t)fd); }

int fsync(int fd) {
  ENSURE();
  struct handle *h = tracked(fd);
  if (!h || h->mark) return real_fsync(fd);
  return sync_common(h, SYNC_FSYNC, 0, call_fsync, (void *)(intptr_t)fd);
}
int fdatasync(int fd) {
  ENSURE();
  struct handle *h = tracked(fd);
  if (!h || h->mark) return real_fdatasync(fd);
  return sync_common(h, SYNC_FDATASYNC, 0, call_fdatasync, (void *)(intptr_t)fd);
}
int sync_file_range(int fd, off_t offset, off_t n, unsigned int flags) {
  ENSURE();
  struct handle *h = tracked(fd);
  if (!h || h->mark) return real_sync_file_range(fd, offset, n, flags);
  pthread_mutex_lock(&lock);
  count(CLASS_SYNC);
  int r = real_sync_file_range(fd, offset, n, flags);
  int err = errno;
  emit_simple(K_SYNC, F_COUNTED | (r ? F_FAILED : 0), NULL, h->id, offset, n,
              r ? err : SYNC_RANGE);
  pthread_mutex_unlock(&lock);
  errno = err;
  return r;
}
int msync(void *addr, size_t len, int flags) {
  ENSURE();
  uint32_t handle = 0;
  if (active) {
    for (int i = 0; i < MAP_MAX; i++) {
      uintptr_t a = (uintptr_t)addr;
      if (maps[i].handle && a >= maps[i].start && a < maps[i].start + maps[i].len)
        handle = maps[i].handle;
    }
  }
  if (!handle) return real_msync(addr, len, flags);
  pthread_mutex_lock(&lock);
  count(CLASS_SYNC);
  int r = real_msync(addr, len, flags);
  int err = errno;
  emit_simple(K_SYNC, F_COUNTED | (r ? F_FAILED : 0), NULL, handle, 0, (int64_t)len,
              r ? err : SYNC_MSYNC);
  pthread_mutex_unlock(&lock);
  errno = err;
  return r;
}
int syncfs(int fd) {
  ENSURE();
  if (!active) return real_syncfs(fd);
  pthread_mutex_lock(&lock);
  count(CLASS_SYNC);
  int r = real_syncfs(fd);
  int err = errno;
  emit_simple(K_SYNCALL, F_COUNTED | (r ? F_FAILED : 0), NULL, 0, 1, 0, r ? err : 0);
  pthread_mutex_unlock(&lock);
  errno = err;
  return r;
}
void sync(void) {
  ENSURE();
  if (!active) {
    real_sync();
    return;
  }
  pthread_mutex_lock(&lock);
  count(CLASS_SYNC);
  real_sync();
  emit_simple(K_SYNCALL, F_COUNTED, NULL, 0, 0, 0, 0);
  pthread_mutex_unlock(&lock);
}

// A name operation on one or two paths; `call` does the real work.
static int name_op(int kind, int dir1, const char *p1, int dir2, const char *p2, int extra,
                   int (*call)(void *), void *arg) {
  ENSURE();
  char a[PATH_MAX] = "", b[PATH_MAX] = "";
  int wa = active && resolve(dir1, p1, a) == 0 && watched(a);
  int wb = active && p2 && resolve(dir2, p2, b) == 0 && watched(b);
  if (!wa && !wb) return call(arg);
  if (kind == K_UNLINK || kind == K_RENAME) {
    pulled_hazards(kind == K_UNLINK ? "unlink" : "rename", wa ? a : "", wb ? b : "");
  }
  // A name made in the folder (the new one: a mkdir's, a link's or rename's target) may be
  // a lock taken: a lock call.
  int takes = (kind == K_MKDIR && wa) || ((kind == K_LINK || kind == K_RENAME) && wb);
  if (takes) stop_before_name_lock();
  pthread_mutex_lock(&lock);
  int shm = is_shm(wa ? a : b);
  if (p2 && wa != wb) {
    // A name moved into or out of the folder: its history is outside the log.
    emit_simple(K_UNMODELLED, 0, wa ? a : b, 0, kind, 0, 0);
  }
  if (!shm) count(CLASS_NAME);
  int r = call(arg);
  int err = errno;
  char both[2 * PATH_MAX + 1];
  size_t len = strlen(a);
  memcpy(both, a, len);
  if (p2) {
    both[len++] = 0;
    size_t lb = strlen(b);
    memcpy(both + len, b, lb);
    len += lb;
  }
  emit(kind, (shm ? 0 : F_COUNTED) | (r ? F_FAILED : 0), both, len, 0, 0, 0, r ? err : extra,
       NULL, 0, 0);
  pthread_mutex_unlock(&lock);
  if (takes && r) name_lock_refused(err);
  errno = err;
  return r;
}

struct args {
  int d1;
  const char *p1;
  int d2;
  const char *p2;
  int flags;
};
static int call_rename(void *v) {
  struct args *x = v;
  return real_renameat2(x->d1, x->p1, x->d2, x->p2, (unsigned)x->flags);
}
static int call_unlink(void *v) {
  struct args *x = v;
  return real_unlinkat(x->d1, x->p1, x->flags);
}
static int call_mkdir(void *v) {
  struct args *x = v;
  return real_mkdirat(x->d1, x->p1, (mode_t)x->flags);
}
static int call_link(void *v) {
  struct args *x = v;
  return real_linkat(x->d1, x->p1, x->d2, x->p2, x->flags);
}
static int call_symlink(void *v) {
  struct args *x = v;
  return real_symlinkat(x->p1, x->d2, x->p2);
}

int renameat2(int d1, const char *p1, int d2, const char *p2, unsigned int flags) {
  struct args x = {d1, p1, d2, p2, (int)flags};
  return name_op(K_RENAME, d1, p1, d2, p2, (int)flags, call_rename, &x);
}
int renameat(int d1, const char *p1, int d2, const char *p2) {
  return renameat2(d1, p1, d2, p2, 0);
}
int rename(const char *p1, const char *p2) { return renameat2(AT_FDCWD, p1, AT_FDCWD, p2, 0); }
int unlinkat(int d, const char *p, int flags) {
  struct args x = {d, p, 0, NULL, flags};
  return name_op(flags & AT_REMOVEDIR ? K_RMDIR : K_UNLINK, d, p, 0, NULL, 0, call_unlink, &x);
}
int unlink(const char *p) { return unlinkat(AT_FDCWD, p, 0); }
int rmdir(const char *p) { return unlinkat(AT_FDCWD, p, AT_REMOVEDIR); }
int mkdirat(int d, const char *p, mode_t mode) {
  struct args x = {d, p, 0, NULL, (int)mode};
  return name_op(K_MKDIR, d, p, 0, NULL, 0, call_mkdir, &x);
}
int mkdir(const char *p, mode_t mode) { return mkdirat(AT_FDCWD, p, mode); }
int linkat(int d1, const char *p1, int d2, const char *p2, int flags) {
  struct args x = {d1, p1, d2, p2, flags};
  return name_op(K_LINK, d1, p1, d2, p2, 0, call_link, &x);
}
int link(const char *p1, const char *p2) { return linkat(AT_FDCWD, p1, AT_FDCWD, p2, 0); }
int symlinkat(const char *target, int d, const char *p) {
  struct args x = {AT_FDCWD, target, d, p, 0};
  // A symlink is not modelled: recorded as unmodelled when it lands in the folder.
  return name_op(K_UNMODELLED, d, p, 0, NULL, 0, call_symlink, &x);
}
int symlink(const char *target, const char *p) { return symlinkat(target, AT_FDCWD, p); }

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t offset) {
  ENSURE();
  void *r = real_mmap64(addr, len, prot, flags, fd, offset);
  struct handle *h = tracked(fd);
  if (h && r != MAP_FAILED && (flags & MAP_SHARED) && (prot & PROT_WRITE)) {
    int shm = h->shm;
    pthread_mutex_lock(&lock);
    emit_simple(K_MMAP, 0, h->path, h->id, offset, (int64_t)len, shm);
    if (!shm) {
      for (int i = 0; i < MAP_MAX; i++) {
        if (!maps[i].handle) {
          maps[i].start = (uintptr_t)r;
          maps[i].len = len;
          maps[i].handle = h->id;
          break;
        }
      }
    }
    pthread_mutex_unlock(&lock);
  }
  return r;
}
void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t offset) {
  return mmap64(addr, len, prot, flags, fd, offset);
}

static void unmodelled_fd(int fd, const char *what) {
  struct handle *h = tracked(fd);
  if (!h) return;
  pthread_mutex_lock(&lock);
  emit_simple(K_UNMODELLED, 0, what, h->id, 0, 0, 0);
  pthread_mutex_unlock(&lock);
}
ssize_t copy_file_range(int in, off_t *oin, int out, off_t *oout, size_t n, unsigned int f) {
  ENSURE();
  unmodelled_fd(out, "copy_file_range");
  return real_copy_file_range(in, oin, out, oout, n, f);
}
ssize_t sendfile64(int out, int in, off_t *offset, size_t n) {
  ENSURE();
  unmodelled_fd(out, "sendfile");
  return real_sendfile64(out, in, offset, n);
}
ssize_t sendfile(int out, int in, off_t *offset, size_t n) {
  return sendfile64(out, in, offset, n);
}
