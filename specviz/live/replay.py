"""A local Prometheus exporter for demos and tests: a recorded vLLM scrape served at ``/metrics``, its
counters advancing as if the server were busy.

The recording (``data/replay/vllm_specdecode.prom``: a real vLLM V1 scrape of a 70B model with a
3-token draft, its spec-decode lines only) is where the counters start; each scrape adds simulated
traffic for the time since the one before (or since the start): the running requests drift between 1
and 16, each runs 12 engine steps a second with one draft each, and each draft position is accepted
with the recording's own conditional rate, moved up and down together by a slow random walk, so the
acceptance a client measures over a window varies around the recorded one. Companion series the
recording lacks (running and waiting requests, KV-cache usage, generation tokens: the drafts'
accepted tokens plus one bonus token each) are simulated too. Everything is seeded.

It is labelled a replay wherever it shows: a comment first in the text, ``replay:`` before every
``model_name`` and a ``Server: specviz-replay`` header. It binds 127.0.0.1 only.

``python -m specviz.live.replay --port N`` runs it until Ctrl-C.
"""

from __future__ import annotations

import argparse
import math
import re
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Sequence

import numpy as np

from specviz import settings
from specviz.errors import InputError

__all__ = ["HEADER", "MODEL_PREFIX", "recording", "Replay", "ReplayServer", "start", "main"]

HEADER = "# specviz replay: a recorded vLLM scrape with simulated traffic, not a live server"
MODEL_PREFIX = "replay:"
_HOST = "127.0.0.1"  # a demo source for this machine's app and tests, never for the network
_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
_SAMPLE = re.compile(r"^(?P<name>[A-Za-z_:][A-Za-z0-9_:]*)(?:\{(?P<labels>[^}]*)\})?[ \t]+(?P<value>\S+)$")
_LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')
_MODEL_NAME = re.compile(r'(model_name=")')

# The simulated traffic: a 70B model on four GPUs at a few concurrent requests.
_STEPS_PER_S = 12.0  # engine steps a second; each gives every running request one draft
_RUNNING = (1.0, 16.0)  # bounds of the running requests' walk
_RUNNING_STEP = 1.0  # its standard deviation per √s
_SHIFT_STEP = 0.08  # the acceptance walk's standard deviation per √s, in logits (0.37 at rest)
_SHIFT_MAX = 1.0  # and its bound
_SHIFT_HALF_LIFE_S = 30.0  # how fast it returns to the recorded rates
_KV_PER_REQUEST = 0.045  # KV-cache share a running request holds


def recording() -> str:
    """The recorded scrape shipped under ``SPECVIZ_DATA_DIR/replay/``."""
    return (Path(settings.get("SPECVIZ_DATA_DIR")) / "replay" / "vllm_specdecode.prom").read_text(encoding="utf-8")


def _role(name: str) -> str | None:
    """Which spec-decode counter a sample name is, by its ending (vLLM V1's names)."""
    for suffix, role in (("num_drafts_total", "drafts"), ("num_draft_tokens_total", "draft_tokens"),
                         ("num_accepted_tokens_total", "accepted"), ("accepted_tokens_per_pos_total", "per_pos")):
        if name.endswith(suffix):
            return role
    return None


def _logit(p: float) -> float:
    return math.log(p / (1.0 - p))


def _number(value: float) -> str:
    return repr(float(value))  # as prometheus_client writes it: 14902.0


class Replay:
    """The recorded counters and simulated gauges, advanced by :meth:`advance`.

    Parameters
    ----------
    text : str
        A vLLM V1 scrape with ``spec_decode_num_drafts``, ``_num_draft_tokens``,
        ``_num_accepted_tokens`` and ``_num_accepted_tokens_per_pos`` counters of one label set
        (:func:`recording` by default).
    seed : int
        Seed of the simulated traffic.

    Raises
    ------
    ValueError
        If ``text`` lacks one of those counters or holds more than one label set of them.
    """

    def __init__(self, text: str | None = None, seed: int = 0) -> None:
        self._lines = (recording() if text is None else text).splitlines()
        self._rng = np.random.default_rng(seed)
        self._values: dict[int, float] = {}  # line index → current value, for the counters advanced
        self._per_pos: dict[int, int] = {}  # position → line index
        roles: dict[str, int] = {}
        label_sets = set()
        for index, line in enumerate(self._lines):
            match = _SAMPLE.match(line)
            role = _role(match["name"]) if match else None
            if role is None:
                continue
            labels = dict(_LABEL.findall(match["labels"] or ""))
            self._values[index] = float(match["value"])
            if role == "per_pos":
                self._per_pos[int(labels.pop("position"))] = index
            else:
                roles[role] = index
            label_sets.add(tuple(sorted(labels.items())))
        missing = {"drafts", "draft_tokens", "accepted"} - roles.keys()
        if missing or not self._per_pos or len(label_sets) != 1:
            raise InputError("replay.not_spec_decode", missing=str(sorted(missing)), positions=len(self._per_pos),
                             label_sets=len(label_sets))
        self._roles = roles
        self._labels = ",".join(f'{k}="{MODEL_PREFIX if k == "model_name" else ""}{v}"'
                                for k, v in label_sets.pop())
        positions = [self._values[self._per_pos[i]] for i in sorted(self._per_pos)]
        reached = [self._values[roles["drafts"]], *positions[:-1]]  # drafts that reached each position
        # The recording's conditional acceptance per position, kept off 0 and 1 so logits exist.
        self._base = [_logit(min(max(a / max(r, 1.0), 0.01), 0.99)) for a, r in zip(positions, reached)]
        self._shift = 0.0
        self._running = 8.0
        self._waiting = 0.0
        self._kv = self._running * _KV_PER_REQUEST
        self._generation = self._values[roles["drafts"]] + self._values[roles["accepted"]]

    @property
    def acceptance(self) -> list[float]:
        """Current conditional acceptance rate of each draft position."""
        return [1.0 / (1.0 + math.exp(-(b + self._shift))) for b in self._base]

    def advance(self, seconds: float) -> None:
        """Add ``seconds`` of simulated traffic: gauges drift, counters grow (never shrink)."""
        if seconds <= 0:
            return
        rng, root = self._rng, math.sqrt(seconds)
        low, high = _RUNNING
        self._running = float(np.clip(self._running + rng.normal(0.0, _RUNNING_STEP * root), low, high))
        decay = 0.5 ** (seconds / _SHIFT_HALF_LIFE_S)
        self._shift = float(np.clip(self._shift * decay + rng.normal(0.0, _SHIFT_STEP * root), -_SHIFT_MAX, _SHIFT_MAX))
        running = round(self._running)
        self._waiting = float(rng.poisson(0.5 * max(running - 12, 0)))
        self._kv = float(np.clip(running * _KV_PER_REQUEST + rng.normal(0.0, 0.01), 0.0, 1.0))
        drafts = int(rng.poisson(running * _STEPS_PER_S * seconds))
        reached, accepted = drafts, 0
        for position, rate in enumerate(self.acceptance):
            reached = int(rng.binomial(reached, rate))  # a position is tried only after its predecessor
            self._values[self._per_pos[position]] += reached
            accepted += reached
        self._values[self._roles["drafts"]] += drafts
        self._values[self._roles["draft_tokens"]] += drafts * len(self._per_pos)
        self._values[self._roles["accepted"]] += accepted
        self._generation += drafts + accepted  # the accepted tokens and one bonus token per draft

    def text(self) -> str:
        """The exposition text now: the recording with current counters, then the simulated series."""
        out = [HEADER]
        for index, line in enumerate(self._lines):
            if _SAMPLE.match(line):
                line = _MODEL_NAME.sub(rf"\1{MODEL_PREFIX}", line)
                if index in self._values:
                    line = f"{line.rsplit(None, 1)[0]} {_number(self._values[index])}"
            out.append(line)
        out.append("# specviz replay: the series below are simulated; the recording holds spec-decode lines only")
        for name, kind, help_text, value in (
                ("vllm:num_requests_running", "gauge", "Number of requests in model execution batches.",
                 float(round(self._running))),
                ("vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.", self._waiting),
                ("vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.", self._kv),
                ("vllm:generation_tokens_total", "counter", "Number of generation tokens processed.",
                 self._generation)):
            out += [f"# HELP {name} {help_text}", f"# TYPE {name} {kind}", f"{name}{{{self._labels}}} {_number(value)}"]
        return "\n".join(out) + "\n"


class _Server(ThreadingHTTPServer):
    """The HTTP server and its replay, which one lock serialises."""

    def __init__(self, port: int, replay: Replay, speed: float) -> None:
        super().__init__((_HOST, port), _Handler)
        self.replay = replay
        self.speed = speed
        self.lock = threading.Lock()
        self.last = time.monotonic()

    def scrape(self) -> bytes:
        with self.lock:
            now = time.monotonic()
            self.replay.advance((now - self.last) * self.speed)
            self.last = now
            return self.replay.text().encode("utf-8")


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    server_version = "specviz-replay"
    sys_version = ""

    def do_GET(self) -> None:
        if self.path.split("?", 1)[0] == "/metrics":
            status, body, kind = 200, self.server.scrape(), _CONTENT_TYPE
        else:
            status, body, kind = 404, b"specviz replay: the metrics are at /metrics\n", "text/plain; charset=utf-8"
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass  # a request line per scrape on stderr would drown the app's own output


class ReplayServer:
    """A running replay exporter; a context manager that stops it on exit.

    Attributes
    ----------
    url : str
        Its metrics URL, ``http://127.0.0.1:PORT/metrics``.
    replay : Replay
        What it serves.
    started : float
        When it started, in seconds since the epoch. Each exporter starts again from the recording's
        totals, so two exporters' scrapes are two sources, never one counter that went back.
    """

    def __init__(self, port: int = 0, *, seed: int = 0, speed: float = 1.0) -> None:
        self.replay = Replay(seed=seed)
        self.started = time.time()
        self._server = _Server(port, self.replay, speed)
        self.url = f"http://{_HOST}:{self._server.server_address[1]}/metrics"
        # A short poll: stop() waits up to one interval for the loop to notice.
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), name="specviz-replay",
                                        daemon=True)
        self._thread.start()
        self._stopped = False

    def stop(self) -> None:
        """Stop serving and free the port; calling it again does nothing."""
        if self._stopped:
            return
        self._stopped = True
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def __enter__(self) -> ReplayServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start(port: int = 0, *, seed: int = 0, speed: float = 1.0) -> ReplayServer:
    """Serve the replay on 127.0.0.1 in a background thread.

    Parameters
    ----------
    port : int
        The port; 0 takes a free one (read it from ``.url``).
    seed : int
        Seed of the simulated traffic.
    speed : float
        Simulated seconds per real second (tests run it faster).

    Returns
    -------
    ReplayServer
        Running; ``.url`` to scrape, ``.stop()`` or a ``with`` block to end it.

    Raises
    ------
    OSError
        If the port is taken.
    """
    return ReplayServer(port, seed=seed, speed=speed)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m specviz.live.replay [--port N] [--seed S] [--speed X]``: serve until interrupted.

    Returns 0 after Ctrl-C, 2 if the port cannot be bound (one line on stderr).
    """
    parser = argparse.ArgumentParser(prog="python -m specviz.live.replay", description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: a free one)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the simulated traffic")
    parser.add_argument("--speed", type=float, default=1.0, help="simulated seconds per real second")
    args = parser.parse_args(argv)
    # A process a script starts in the background inherits SIGINT ignored, and Python then raises no
    # KeyboardInterrupt: Ctrl-C, or kill -INT, must stop it there too (a test's child had run on). Only
    # the main thread may set it, and the caller's handler is put back on return (an attack pass).
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return _serve(args)
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


def _serve(args: argparse.Namespace) -> int:
    """:func:`main`'s server, from its parsed arguments, until interrupted."""
    try:
        server = start(args.port, seed=args.seed, speed=args.speed)
    except OSError as exc:
        print(f"cannot serve on {_HOST}:{args.port}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    print(f"specviz replay (a recorded vLLM scrape, simulated traffic) at {server.url}; Ctrl-C stops it",
          flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
