# A child for recorder_itest.ts: pwritev2 with its flags, into <dir>/p.log:
#   "one" at 0 with RWF_DSYNC, "two" with RWF_APPEND (offset 0 given, appended at 3),
#   then "xx" at 1 with no flag.
import os
import sys

fd = os.open(os.path.join(sys.argv[1], "p.log"), os.O_RDWR | os.O_CREAT, 0o600)
os.pwritev(fd, [b"one"], 0, os.RWF_DSYNC)
os.pwritev(fd, [b"two"], 0, os.RWF_APPEND)
os.pwritev(fd, [b"xx"], 1, 0)
os.close(fd)
