"""A real HTTP receiver on loopback for webhook tests: records every request (arrival time by
the possibly-moved clock, headers, raw body) and answers by a swappable behaviour."""

import socket
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Received:
    at: float
    headers: dict[str, str]
    body: bytes
    first_byte_at: float = 0.0  # wall clock (time.time) when the request line arrived
    path: str = ""


# A behaviour returns (status, body) to answer, or one of these actions.
RESET = "reset"  # close with an RST, no response
HANG = "hang"  # sleep `hang_seconds`, then answer 200 (too late)
HOLD = "hold"  # block until `release` is set, then answer 200

Behaviour = Callable[[Received], tuple[int, bytes] | str]


@dataclass
class Receiver:
    behaviour: Behaviour = lambda req: (200, b"ok")
    hang_seconds: float = 5.0
    requests: list[Received] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)
    arrived: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)
    port: int = 0
    extra_headers: dict[str, str] = field(default_factory=dict)
    # Keep connections open after a response (HTTP/1.1 keep-alive) instead of closing them.
    keep_alive: bool = False
    # With keep_alive: a connection's `drop_after`-th request and later are read and then the
    # connection is closed without recording or answering them (a receiver that closed an
    # idle keep-alive connection just as the request came in).
    drop_after: int = 0
    # With keep_alive: close every connection right after its response, without saying so
    # (no `Connection: close`), as a receiver with a very short idle timeout does.
    close_silently: bool = False
    connections: int = 0  # connections accepted

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    def ids(self) -> list[str]:
        with self.lock:
            return [r.headers.get("webhook-id", "") for r in self.requests]

    def always(self, status: int, body: bytes = b"") -> None:
        self.behaviour = lambda req: (status, body)


def _handler(receiver: Receiver) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format, *args):
            pass

        def setup(self):
            super().setup()
            self.served = 0
            with receiver.lock:
                receiver.connections += 1

        def do_POST(self):
            first_byte = time.perf_counter_ns()
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length)
            self.served += 1
            if receiver.keep_alive and receiver.drop_after and self.served >= receiver.drop_after:
                self.close_connection = True
                return
            req = Received(
                at=time.time(),
                headers={k.lower(): v for k, v in self.headers.items()},
                body=body,
                first_byte_at=first_byte / 1e9,
                path=self.path,
            )
            with receiver.lock:
                receiver.requests.append(req)
            receiver.arrived.set()
            action = receiver.behaviour(req)
            if action == RESET:
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.connection.close()
                self.close_connection = True
                return
            if action == HANG:
                time.sleep(receiver.hang_seconds)
                action = (200, b"late")
            elif action == HOLD:
                receiver.release.wait(60)
                action = (200, b"held")
            status, payload = action
            try:
                self.send_response(status)
                for name, value in receiver.extra_headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                if not receiver.keep_alive:
                    self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(payload)
            except OSError:
                pass
            self.close_connection = not receiver.keep_alive or receiver.close_silently

    return Handler


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass


def start(receiver: Receiver) -> tuple[ThreadingHTTPServer, threading.Thread]:
    server = _QuietServer(("127.0.0.1", 0), _handler(receiver))
    receiver.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    return server, thread
