"""The SQL console's fork server: one process that loads DuckDB and Arrow once and forks a process
for each console query (:mod:`specviz.results.sandbox` runs the query in it, locked down).

A new interpreter for each query spent about 0.45 s of one core loading its libraries before it read
its request, most of what a query's process cost; a fork of the loaded server takes a few
milliseconds. The server itself never runs a query, so each query still starts from the same
state: no session can affect another. It is started at the first query of the process that needs
it, with ``-I`` (no environment, user site or working folder read) and an environment that names
nothing of the host; it forks only while it is one thread (the libraries' own threads are turned
off: OpenBLAS's pool and Arrow's jemalloc background thread). A query's process is a session of its
own and dies with the server (``PR_SET_PDEATHSIG``). The parent replaces a server that fails it:
one that forks nothing within the start's bound, or does not report a process's end within
:data:`_REPORT_TIMEOUT_S` (stopped, wedged) is killed; one whose query ended by a fault (a bad
address, an abort) is retired, so that no later query runs in a copy of the address layout an
earlier one may have probed, and so is one that has forked :data:`_FORKS_PER_SERVER` queries. A server ends when the process that started it closes its end of the
channel (or exits), once the queries it runs have ended.

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
from typing import Any, BinaryIO, Sequence

__all__ = ["QueryProcess", "start_query_process", "stop_server"]

_ROOT = Path(__file__).resolve().parents[2]  # the folder that holds the specviz package
# Only what turns the libraries' own threads off: a fork of a process with other threads may copy a
# lock that one of them held, which no thread of the copy would ever release.
_SERVER_ENV = {"LANG": "C.UTF-8", "OPENBLAS_NUM_THREADS": "1", "JE_ARROW_MALLOC_CONF": "background_thread:false"}
_MAX_TABLES = 64
_STATUS_BYTES = 64
# The server reports a process's end within milliseconds of it: a report this late means the server
# is stopped or wedged. The same bound holds a request's send to a server that reads none.
_REPORT_TIMEOUT_S = 5.0
_PR_SET_PDEATHSIG = 1  # prctl(2)
# A process ended by one of these may have met a fault in the libraries: the next query gets a new
# server, whose address layout an earlier query cannot have learned (every fork shares its server's).
_FAULTS = frozenset({signal.SIGSEGV, signal.SIGBUS, signal.SIGILL, signal.SIGFPE, signal.SIGABRT})
# Nor does a server fork without end: after this many queries the next gets a new one (its start, about
# 0.45 s of one core, is then 2 ms a query), so that a layout one query learns serves few others.
_FORKS_PER_SERVER = 200


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
    lost : bool
        Whether its server ended (or stopped) before it reported the process's end: the exit code is
        then not known, and the process was killed.
    """

    def __init__(self, pid: int, pidfd: int, stdin: BinaryIO, stdout: BinaryIO, reply: socket.socket,
                 server: _Server) -> None:
        self.pid, self.stdin, self.stdout = pid, stdin, stdout
        self.returncode: int | None = None
        self.peak_bytes: int | None = None
        self.lost = False
        self._pidfd, self._reply, self._server = pidfd, reply, server

    def kill(self) -> None:
        """SIGKILL to the process, if it still runs."""
        try:
            signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)
        except OSError:  # ended already, or its pidfd closed by wait
            pass

    def wait(self) -> int:
        """Wait for the process to end (the caller has read its output to the end, or killed it); its
        exit code. A server that does not report it within :data:`_REPORT_TIMEOUT_S` (stopped, or
        killed) is replaced, and the process is killed too (``lost``)."""
        if self.returncode is None:
            try:
                self._reply.settimeout(_REPORT_TIMEOUT_S)
                status = self._reply.recv(_STATUS_BYTES).split()
            except OSError:
                status = []
            if len(status) == 2:
                self.returncode, self.peak_bytes = int(status[0]), int(status[1])
            else:
                self.kill()
                self.returncode, self.peak_bytes, self.lost = -signal.SIGKILL, 0, True
            if len(status) != 2 or -self.returncode in _FAULTS:
                _replace(self._server, kill=len(status) != 2)
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
        channel.settimeout(_REPORT_TIMEOUT_S)  # a send to a server that reads nothing fails, not waits
        self.channel = channel
        self.owner = os.getpid()
        self.retired = False  # takes no more requests, and ends once the queries it runs have
        self.forks = 0

    def alive(self) -> bool:
        return self.owner == os.getpid() and self.process.poll() is None

    def stop(self, kill: bool = False) -> None:
        """End the server: it reads end-of-file on its channel and returns (``kill``: SIGKILL first,
        for a server that no longer reads)."""
        self.channel.close()
        if kill:
            self.process.kill()
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


def _replace(server: _Server, kill: bool) -> None:
    """Give the next query a new server: ``server`` is killed (``kill``: it stopped reporting, or
    reads no request; its query processes die with it), or retired (one of its queries met a fault):
    it takes no more requests, reports the queries it runs and ends after them."""
    global _server
    with _lock:
        if _server is server:
            _server = None
    if server.owner == os.getpid():
        if kill:
            server.stop(kill=True)
        else:
            server.retired = True
            server.channel.close()  # reaped once it ends, by the next process this one starts


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
    for _ in range(2):
        server = _running_server()
        reply, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        stdin_read, stdin_write = os.pipe()
        stdout_read, stdout_write = os.pipe()
        fds: list[int] = []
        try:
            try:
                socket.send_fds(server.channel, [b"query"], [theirs.fileno(), stdin_read, stdout_write, *table_fds])
            finally:
                # The message holds its own references: with these closed here, a server that ends before
                # it forks leaves the reply socket at end-of-file, not waiting for its timeout.
                _close(theirs, stdin_read, stdout_write)
            reply.settimeout(timeout_s)
            message, fds, _, _ = socket.recv_fds(reply, _STATUS_BYTES, 1)
        except TimeoutError:  # it reads no request, or forks none: stopped or wedged
            _close(reply, stdin_write, stdout_read)
            _replace(server, kill=True)
            raise
        except OSError:  # it has ended, or another query's fault retired it meanwhile (its channel closed)
            pass
        except BaseException:
            _close(reply, stdin_write, stdout_read)
            raise
        if fds:
            server.forks += 1
            if server.forks >= _FORKS_PER_SERVER:
                _replace(server, kill=False)
            return QueryProcess(int(message), fds[0], open(stdin_write, "wb"), open(stdout_read, "rb"), reply,
                                server)
        _close(reply, stdin_write, stdout_read)
        _replace(server, kill=not server.retired)  # once more, with a new server; a retired one's queries run on
    raise OSError("the SQL console's query server could not be reached")


def _close(*ends: socket.socket | int) -> None:
    for end in ends:
        end.close() if isinstance(end, socket.socket) else os.close(end)


def stop_server() -> None:
    """End this process's server, if it runs, and wait for it (it ends once the queries it runs have):
    what a process that is done with the console may call, and what a test of a first start calls."""
    global _server
    with _lock:
        server, _server = _server, None
    if server is not None and server.owner == os.getpid():
        server.stop()


# ------------------------------------------------------------------------------- server side
def _serve() -> None:
    """The server's loop: load the libraries, then fork one process per request and report each
    one's end; once the channel (its standard input) is closed, report those still running and return."""
    import ctypes

    from specviz.results import sandbox

    sandbox.load_query_libraries()
    libc = ctypes.CDLL(None, use_errno=True)
    if len(os.listdir("/proc/self/task")) != 1:
        sys.exit(3)  # not safe to fork: the parent's first request sees the server gone and says so
    channel = socket.socket(fileno=0)
    running: dict[int, tuple[int, socket.socket]] = {}  # pidfd: (pid, reply)
    reading = True
    while reading or running:
        readable, _, _ = select.select([channel, *running] if reading else [*running], [], [])
        for pidfd in (r for r in readable if r is not channel):
            pid, reply = running.pop(pidfd)
            _, status, usage = os.wait4(pid, 0)
            try:
                reply.send(f"{os.waitstatus_to_exitcode(status)} {usage.ru_maxrss * 1024}".encode())
            except OSError:  # the parent no longer waits for it
                pass
            reply.close()
            os.close(pidfd)
        if channel not in readable:
            continue
        message, fds, _, _ = socket.recv_fds(channel, _STATUS_BYTES, 3 + _MAX_TABLES)
        if not message:  # the parent has gone, or retired this server
            reading = False
            channel.close()
            continue
        if len(fds) < 3:
            for fd in fds:
                os.close(fd)
            continue
        reply = socket.socket(fileno=fds[0])
        server = os.getpid()
        pid = os.fork()
        if pid == 0:
            _query_process(fds[1], fds[2], fds[3:], libc, server)
        pidfd = os.pidfd_open(pid)
        for fd in fds[1:]:
            os.close(fd)
        try:
            socket.send_fds(reply, [str(pid).encode()], [pidfd])
        except OSError:  # the parent gave up waiting: the process reads end-of-file and ends
            pass
        running[pidfd] = (pid, reply)


def _query_process(stdin_fd: int, stdout_fd: int, table_fds: Sequence[int], libc: Any, server: int) -> None:
    """In the forked process: a session of its own, killed if the server dies (no query outlives
    the server that reports it); only its pipes, its tables and the null device as its standard
    streams kept (the server's channel, other queries' reply sockets and pidfds are closed); then the
    query, and an exit without the interpreter's teardown."""
    code = 1
    try:
        os.setsid()
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != server:  # it died before the line above
            return
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
