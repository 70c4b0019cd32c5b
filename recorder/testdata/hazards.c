// The recorder's hazards, committed on purpose (recorder/hazard_itest.ts builds and runs
// it under the recorder): hazards <mode> <file> [library] [library].
//   posix-close  a read lock through one descriptor, a second opened and closed
//   ofd-close    the same with an OFD lock (no hazard: it belongs to its description)
//   plain-close  two descriptors, no lock (no hazard)
//   fork-write   a child forked with the file open writes to it before exec
//   dlopen       dlopens each library, then opens the file
//   unlink       unlinks the file
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int lock_with(int fd, int cmd) {
  struct flock fl = {.l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1};
  return fcntl(fd, cmd, &fl);
}

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  const char *mode = argv[1], *file = argv[2];
  if (strcmp(mode, "dlopen") == 0) {
    for (int i = 3; i < argc; i++)
      if (!dlopen(argv[i], RTLD_NOW | RTLD_LOCAL)) return 3;
    int fd = open(file, O_RDWR | O_CREAT, 0644);
    return fd < 0 ? 4 : close(fd);
  }
  if (strcmp(mode, "unlink") == 0) return unlink(file) ? 5 : 0;
  int fd = open(file, O_RDWR | O_CREAT, 0644);
  if (fd < 0) return 4;
  if (strcmp(mode, "fork-write") == 0) {
    pid_t pid = fork();
    if (pid == 0) _exit(write(fd, "x", 1) == 1 ? 0 : 1);
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 6;
  }
  if (strcmp(mode, "posix-close") == 0 && lock_with(fd, F_SETLK)) return 7;
  if (strcmp(mode, "ofd-close") == 0 && lock_with(fd, F_OFD_SETLK)) return 7;
  int second = open(file, O_RDONLY);
  if (second < 0) return 4;
  close(second);
  return close(fd);
}
