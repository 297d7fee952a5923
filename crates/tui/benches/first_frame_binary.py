#!/usr/bin/env python3
"""Time from starting the real `retrace` binary on a session to its first frame on a terminal.

Each run starts `retrace --session ID --workspace WS` on a new pseudo-terminal of 120x40 (the
child sets the size before it executes the binary) with a clean environment (HOME and
RETRACE_HOME pointing at the benchmark's data, no API key: the UI opens and its first screen says
the model cannot answer yet, as `retrace` does on a machine without a key), and reads the terminal
until the first 8 characters of the session id appear: they are written by the status line, in
the same write as the rest of the first frame. The time is taken from just before `fork` to the
read that returned them. Then Ctrl-D (empty input: quit) ends the UI, which is waited for
(SIGTERM after 10 s), untimed.

What it includes: process start, the runtime, the config, opening the session (log read, lease,
checkpoint store), the status, the transcript, the failed model setup, entering the alternate
screen and drawing. What it does not: the terminal emulator's own rendering of the bytes (there
is none: the bytes are only read).

With FIRST_FRAME_IDLE=SECONDS, each run then leaves the UI idle (no key, no turn) for SECONDS
after a 1 s pause, and reports the CPU time the process used meanwhile (/proc/PID/stat) and the
bytes it wrote to the terminal.

Usage (the session made by the first_frame bench with FIRST_FRAME_KEEP):
    FIRST_FRAME_KEEP=DIR cargo bench -p retrace-tui --bench first_frame
    cargo build --profile bench -p retrace-cli --bin retrace
    python3 crates/tui/benches/first_frame_binary.py $CARGO_TARGET_DIR/release/retrace DIR/home ID DIR/ws [RUNS]
"""

import fcntl
import os
import pty
import select
import signal
import statistics
import struct
import sys
import termios
import time


ALT_SCREEN = b"\x1b[?1049h"


def cpu_seconds(pid):
    """User + system CPU time of process `pid` so far (/proc/PID/stat fields 14 and 15)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def drain(fd, seconds):
    """Reads the terminal for `seconds`; returns how many bytes the UI wrote meanwhile."""
    n = 0
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        ready, _, _ = select.select([fd], [], [], max(0.0, end - time.perf_counter()))
        if ready:
            try:
                n += len(os.read(fd, 1 << 16))
            except OSError:
                break
    return n


def first_frame(binary, home, session, ws, idle=0):
    marker = session[:8].encode()
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": home,
        "RETRACE_HOME": home,
        "TERM": "xterm-256color",
    }
    start = time.perf_counter()
    pid, fd = pty.fork()
    if pid == 0:
        fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        os.execve(binary, [binary, "--session", session, "--workspace", ws], env)
    seen = b""
    elapsed = None
    deadline = start + 30
    while time.perf_counter() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if not ready:
            continue
        try:
            chunk = os.read(fd, 1 << 16)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
        # The UI's frame, not an error naming the session: after entering the alternate screen.
        if marker in seen.partition(ALT_SCREEN)[2]:
            elapsed = time.perf_counter() - start
            break
    idle_cpu = idle_bytes = None
    if elapsed is not None and idle > 0:
        drain(fd, 1.0)
        before = cpu_seconds(pid)
        idle_bytes = drain(fd, idle)
        idle_cpu = cpu_seconds(pid) - before
    os.write(fd, b"\x04")
    end = time.perf_counter() + 10
    status = None
    while status is None:
        try:
            ready, _, _ = select.select([fd], [], [], 0.1)
            if ready:
                os.read(fd, 1 << 16)
        except OSError:
            pass
        done, status_word = os.waitpid(pid, os.WNOHANG)
        if done:
            status = status_word
        elif time.perf_counter() > end:
            os.kill(pid, signal.SIGTERM)
            _, status = os.waitpid(pid, 0)
    os.close(fd)
    if elapsed is None:
        sys.exit(f"no first frame within 30 s; the terminal showed: {seen[-2000:]!r}")
    return elapsed, idle_cpu, idle_bytes


def start_and_exit(binary):
    """The floor: starting the binary and letting it exit (`--version`)."""
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.execv(binary, [binary, "--version"])
    os.waitpid(pid, 0)
    return time.perf_counter() - start


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    binary, home, session, ws = sys.argv[1:5]
    runs = int(sys.argv[5]) if len(sys.argv) > 5 else 11
    idle = float(os.environ.get("FIRST_FRAME_IDLE", "0"))
    times = []
    floors = []
    for i in range(runs):
        floors.append(start_and_exit(binary))
        t, idle_cpu, idle_bytes = first_frame(binary, home, session, ws, idle)
        times.append(t)
        line = f"run {i + 1:>2}: first frame {t * 1000:.1f} ms (start and exit: {floors[-1] * 1000:.1f} ms)"
        if idle_cpu is not None:
            line += f"; idle {idle:g} s: {idle_cpu * 1000:.0f} ms of CPU, {idle_bytes} bytes written"
        print(line)
    print(
        f"median of {runs}: first frame {statistics.median(times) * 1000:.1f} ms, "
        f"start and exit (--version) {statistics.median(floors) * 1000:.1f} ms (target <= 150 ms)"
    )


if __name__ == "__main__":
    main()
