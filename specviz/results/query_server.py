"""The SQL console's fork server: one process that loads DuckDB and Arrow once and forks a process
for each console query (:mod:`specviz.results.sandbox` runs the query in it, locked down).

A new interpreter for each query spent about 0.45 s of one core loading its libraries before it read
its request, most of what a query's process cost; a fork of the loaded server takes a few
milliseconds. The server itself never runs a query, so each query still starts from the same
state: no session can affect another. It is started at the first query of the process that needs
it, with ``-I`` (no environment, user site or working folder read) and an environment that names
nothing of the host; it forks only while it is one thread (the libraries' own threads are turned
off: OpenBLAS's pool and Arrow's jemalloc background thread), and it ends when the process that
started it closes its end of the channel or exits.

Protocol (``AF_UNIX`` ``SOCK_SEQPACKET``, whose messages keep their bounds): a request is one
message on the server's channel carrying, as descriptors, a reply socket, the read end of the
query's standard input, the write end of its standard output and the tables' memory files. The
server forks, answers on the reply socket with the process id and a pidfd (which names that process
and no later one of the same id, so that a kill at the time limit can never reach another), and,
once the process has ended, with its exit code (negative: the signal that ended it) and its peak
resident memory.

May import: the standard library; the server process imports :mod:`specviz.results.sandbox` (DuckDB,
Arrow). Must not import: pandas (the query process never loads it), Streamlit.
"""

from __future__ import annotations

import os
import select
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import BinaryIO, Sequence

__all__ = ["QueryProcess", "start_query_process", "stop_server"]

_ROOT = Path(__file__).resolve().parents[2]  # the folder that holds the specviz package
# Only what turns the libraries' own threads off: a fork of a process with other threads may copy a
# lock that one of them held, which no thread of the copy would ever release.
_SERVER_ENV = {"LANG": "C.UTF-8", "OPENBLAS_NUM_THREADS": "1", "JE_ARROW_MALLOC_CONF": "background_thread:false"}
_MAX_TABLES = 64
_STATUS_BYTES = 64


class QueryProcess:
    """One query's process, forked by the server: its standard input and output, and its exit.

    Attributes
    ----------
    pid : int
    stdin, stdout : file
        Pipes to the process (write the request to ``stdin``, read the answer from ``stdout``).
    returncode : int or None
        Its exit code once :meth:`wait` has returned (negative: the signal that ended it).
    peak_bytes : int or None
        Its peak resident memory, from the same report.
    """

    def __init__(self, pid: int, pidfd: int, stdin: BinaryIO, stdout: BinaryIO, reply: socket.socket) -> None:
        self.pid, self.stdin, self.stdout = pid, stdin, stdout
        self.returncode: int | None = None
        self.peak_bytes: int | None = None
        self._pidfd, self._reply = pidfd, reply

    def kill(self) -> None:
        """SIGKILL to the process, if it still runs."""
        try:
            signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)
        except (ProcessLookupError, OSError):  # ended already (or its pidfd closed by wait)
            pass

    def wait(self) -> int:
        """Wait for the process to end; its exit code. Where the server ended first (killed), the
        query's process is said to have been killed too (``-SIGKILL``)."""
        if self.returncode is None:
            try:
                self._reply.settimeout(None)
                status = self._reply.recv(_STATUS_BYTES).split()
            except OSError:
                status = []
            code, peak = (int(status[0]), int(status[1])) if len(status) == 2 else (-signal.SIGKILL, 0)
            self.returncode, self.peak_bytes = code, peak
            self._reply.close()
            os.close(self._pidfd)
        return self.returncode


class _Server:
    """The server process and the parent's end of its channel."""

    def __init__(self) -> None:
        channel, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        command = [sys.executable, "-I", "-B", "-c",
                   f"import sys; sys.path.insert(0, {str(_ROOT)!r}); "
                   "from specviz.results.query_server import _serve; _serve()"]
        try:
            self.process = subprocess.Popen(command, stdin=theirs.fileno(), stdout=subprocess.DEVNULL,
                                            stderr=subprocess.DEVNULL, cwd=_ROOT, env=_SERVER_ENV,
                                            start_new_session=True)
        finally:
            theirs.close()
        self.channel = channel
        self.owner = os.getpid()

    def alive(self) -> bool:
        return self.owner == os.getpid() and self.process.poll() is None

    def stop(self) -> None:
        self.channel.close()  # the server's end reads end-of-file and it returns
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


_lock = threading.Lock()
_server: _Server | None = None


def _running_server() -> _Server:
    global _server
    with _lock:
        if _server is None or not _server.alive():
            _server = _Server()
        return _server


def start_query_process(table_fds: Sequence[int], timeout_s: float) -> QueryProcess:
    """A new process forked by the server (started here if it is not running), given the tables'
    memory files ``table_fds``, in this order.

    Raises
    ------
    TimeoutError
        The server did not fork within ``timeout_s`` (its own start included).
    OSError
        The server could not be reached, twice (a server that has ended is started again once).
    """
    if len(table_fds) > _MAX_TABLES:
        raise ValueError(f"at most {_MAX_TABLES} tables")
    for attempt in (1, 2):
        server = _running_server()
        reply, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        stdin_read, stdin_write = os.pipe()
        stdout_read, stdout_write = os.pipe()
        fds: list[int] = []
        try:
            socket.send_fds(server.channel, [b"query"], [theirs.fileno(), stdin_read, stdout_write, *table_fds])
            reply.settimeout(timeout_s)
            message, fds, _, _ = socket.recv_fds(reply, _STATUS_BYTES, 1)
        except (BrokenPipeError, ConnectionError):  # the server has ended
            pass
        except BaseException:
            _close(reply, stdin_write, stdout_read)
            raise
        finally:
            _close(theirs, stdin_read, stdout_write)
        if fds:
            return QueryProcess(int(message), fds[0], open(stdin_write, "wb"), open(stdout_read, "rb"), reply)
        _close(reply, stdin_write, stdout_read)
        with _lock:  # once more, with a new server
            if _server is server:
                server.stop()
    raise OSError("the SQL console's query server could not be reached")


def _close(*ends: socket.socket | int) -> None:
    for end in ends:
        end.close() if isinstance(end, socket.socket) else os.close(end)


def stop_server() -> None:
    """End this process's server, if it runs, and wait for it (its query processes finish on their
    own): what a process that is done with the console may call, and what a test of a first start
    calls."""
    global _server
    with _lock:
        server, _server = _server, None
    if server is not None and server.owner == os.getpid():
        server.stop()


# ------------------------------------------------------------------------------- server side
def _serve() -> None:
    """The server's loop: load the libraries, then fork one process per request and report each
    one's end, until the channel (its standard input) is closed."""
    from specviz.results import sandbox

    sandbox.load_query_libraries()
    if len(os.listdir("/proc/self/task")) != 1:
        sys.exit(3)  # not safe to fork: the parent's first request sees the server gone and says so
    channel = socket.socket(fileno=0)
    running: dict[int, tuple[int, socket.socket]] = {}  # pidfd: (pid, reply)
    while True:
        readable, _, _ = select.select([channel, *running], [], [])
        for pidfd in (r for r in readable if r is not channel):
            pid, reply = running.pop(pidfd)
            _, status, usage = os.wait4(pid, 0)
            try:
                reply.send(f"{os.waitstatus_to_exitcode(status)} {usage.ru_maxrss * 1024}".encode())
            except OSError:  # the parent no longer waits for it
                pass
            reply.close()
            os.close(pidfd)
        if channel in readable:
            message, fds, _, _ = socket.recv_fds(channel, _STATUS_BYTES, 3 + _MAX_TABLES)
            if not message:
                return  # the parent has gone
            if len(fds) < 3:
                for fd in fds:
                    os.close(fd)
                continue
            reply = socket.socket(fileno=fds[0])
            pid = os.fork()
            if pid == 0:
                _query_process(fds[1], fds[2], fds[3:])
            pidfd = os.pidfd_open(pid)
            for fd in fds[1:]:
                os.close(fd)
            try:
                socket.send_fds(reply, [str(pid).encode()], [pidfd])
            except OSError:  # the parent gave up waiting: the process reads end-of-file and ends
                pass
            running[pidfd] = (pid, reply)


def _query_process(stdin_fd: int, stdout_fd: int, table_fds: Sequence[int]) -> None:
    """In the forked process: keep only its pipes, its tables and the null device as its standard
    streams (the server's channel, other queries' reply sockets and pidfds are closed), run the
    query, and exit without the interpreter's teardown."""
    code = 1
    try:
        null = os.open(os.devnull, os.O_RDWR)
        for standard in (0, 1, 2):
            os.dup2(null, standard)
        keep = {0, 1, 2, stdin_fd, stdout_fd, *table_fds}
        for name in os.listdir("/proc/self/fd"):
            if int(name) not in keep:
                try:
                    os.close(int(name))
                except OSError:  # the listing's own descriptor, closed already
                    pass
        from specviz.results import sandbox

        with open(stdin_fd, "rb") as stdin, open(stdout_fd, "wb") as stdout:
            sandbox.run_in_query_process(stdin, stdout, table_fds)
        code = 0
    finally:
        os._exit(code)
