#!/usr/bin/env bash
# Checks that `make run` ends with exit 0 on Ctrl-C, as a user's terminal
# sends it: make runs on a pseudo-terminal (python3's pty), and once serve
# listens, a ^C is typed there, which the terminal turns into SIGINT to its
# foreground process group. Fails on a non-zero exit or a "make: ***"
# line. Its own DATA_DIR (a temporary one unless set) and ADDR.
# Usage: scripts/run-interrupt-check.sh   (takes as long as make run's build)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v python3 >/dev/null || { echo "run-interrupt-check: python3 is needed" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export DATA_DIR=${DATA_DIR:-$tmp/data}
export ADDR=${ADDR:-127.0.0.1:$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}
python3 - "$tmp/out" <<'PY'
import os, pty, select, signal, sys, time

log = open(sys.argv[1], "wb")
signal.signal(signal.SIGINT, signal.SIG_DFL)
pid, fd = pty.fork()
if pid == 0:
    os.execvp("make", ["make", "--no-print-directory", "run"])

out = b""
def read(until, deadline):
    global out
    while time.time() < deadline:
        if until is not None and until in out:
            return True
        r, _, _ = select.select([fd], [], [], 1)
        if not r:
            continue
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            return until is None
        if not chunk:
            return until is None
        out += chunk
        log.write(chunk)
        log.flush()
    return False

if not read(b"shipgraph listening on", time.time() + 1200):
    os.kill(pid, signal.SIGKILL)
    sys.exit("run-interrupt-check: make run never listened:\n" + out.decode(errors="replace")[-3000:])
os.write(fd, b"\x03")  # Ctrl-C, typed on make's terminal
read(None, time.time() + 120)
_, status = os.waitpid(pid, 0)
text = out.decode(errors="replace")
if os.WIFSIGNALED(status):
    sys.exit(f"run-interrupt-check: make died of signal {os.WTERMSIG(status)} on Ctrl-C")
code = os.WEXITSTATUS(status)
if code != 0 or "make: ***" in text:
    sys.exit(f"run-interrupt-check: make run ended with {code} on Ctrl-C:\n" + text[-3000:])
print("run-interrupt-check: make run ended with 0 on Ctrl-C")
PY
