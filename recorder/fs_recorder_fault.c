// fs_recorder, part three: injected faults (FSREC_FAIL_*) and the read interposers they
// need; included by fs_recorder.c (one translation unit, so it shares the recorder's
// static state), not compiled on its own.

// Whether a path ends with FSREC_FAIL_FILE (always, when it is unset).
static int fail_file_matches(const char *path) {
  size_t n = strlen(path), m = strlen(fail_file);
  return m == 0 || (n >= m && strcmp(path + n - m, fail_file) == 0);
}

// Whether the call being made on `path` is one to fail: the FSREC_FAIL_AT-th call of
// FSREC_FAIL_KIND (on FSREC_FAIL_FILE) and the FSREC_FAIL_COUNT - 1 after it, counted
// while armed, on a count of their own (a crash point's count is not moved by it). The
// caller holds the lock.
static int inject(int cls, const char *path) {
  if (!fail_at || cls != fail_class || !fail_file_matches(path)) return 0;
  if (arm_marks && marks_now() != arm_marks) return 0;
  uint64_t n = ++fail_counted;
  return n >= fail_at && (fail_count == 0 || n - fail_at < fail_count);
}

// The first `keep` bytes of a write's buffers, into `out` (room for `count` entries);
// returns how many entries they take.
static int trim(const struct iovec *iov, int count, size_t keep, struct iovec *out) {
  int n = 0;
  for (int i = 0; i < count && keep > 0; i++) {
    size_t take = iov[i].iov_len < keep ? iov[i].iov_len : keep;
    out[n++] = (struct iovec){iov[i].iov_base, take};
    keep -= take;
  }
  return n;
}

// Reads are seen only when they are to fail: any other read is passed on, unlogged.
// Returns 1 (errno set, the failure logged) when this read of a watched file fails.
static int read_fails(int fd, off_t offset, size_t n) {
  if (fork_child) tracked(fd);
  if (fail_class != CLASS_READ) return 0;
  struct handle *h = tracked(fd);
  if (!h || h->mark || h->shm) return 0;
  pthread_mutex_lock(&lock);
  int fail = inject(CLASS_READ, h->path);
  if (fail) {
    if (offset == -1) offset = lseek(fd, 0, SEEK_CUR);
    emit_simple(K_READ, F_FAILED | F_INJECTED, NULL, h->id, offset, (int64_t)n, fail_errno);
  }
  pthread_mutex_unlock(&lock);
  if (fail) errno = fail_errno;
  return fail;
}

static size_t iov_bytes(const struct iovec *iov, int count) {
  size_t total = 0;
  for (int i = 0; i < count; i++) total += iov[i].iov_len;
  return total;
}

ssize_t read(int fd, void *buf, size_t n) {
  ENSURE();
  return read_fails(fd, -1, n) ? -1 : real_read(fd, buf, n);
}
ssize_t pread64(int fd, void *buf, size_t n, off_t offset) {
  ENSURE();
  return read_fails(fd, offset, n) ? -1 : real_pread64(fd, buf, n, offset);
}
ssize_t pread(int fd, void *buf, size_t n, off_t offset) { return pread64(fd, buf, n, offset); }
ssize_t readv(int fd, const struct iovec *iov, int n) {
  ENSURE();
  return read_fails(fd, -1, iov_bytes(iov, n)) ? -1 : real_readv(fd, iov, n);
}
ssize_t preadv64(int fd, const struct iovec *iov, int n, off_t offset) {
  ENSURE();
  return read_fails(fd, offset, iov_bytes(iov, n)) ? -1 : real_preadv64(fd, iov, n, offset);
}
ssize_t preadv(int fd, const struct iovec *iov, int n, off_t offset) {
  return preadv64(fd, iov, n, offset);
}
