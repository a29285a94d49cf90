"""A local HTTP server for download tests (no network: it listens on 127.0.0.1 only).

``server.add(path, body, ...)`` serves ``body`` at ``server.url(path)`` (a path with a query is
matched whole, else by its path); a route may announce
more bytes than it sends (``truncate_at``: the connection closes after that many), answer an
error status for its first ``fail_first`` requests, never answer (``hang``: the handler waits on
an event that only ``close`` sets, so no clock races the client's timeout), or send its own
content type. Every request
is recorded (``server.asked``: the paths, in order).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Route:
    body: bytes
    content_type: str = "application/octet-stream"
    truncate_at: int | None = None  # send only this many bytes of the announced body, then close
    fail_first: int = 0  # answer 500 to this many requests first
    status: int = 200
    hang: bool = False  # answer nothing until the server closes (a server that hangs)
    served: int = 0


class LocalServer:
    def __init__(self) -> None:
        self.routes: dict[str, Route] = {}
        self.asked: list[str] = []
        self.closing = threading.Event()  # set by close: releases the handlers of hanging routes
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                server.asked.append(self.path)
                route = server.routes.get(self.path, server.routes.get(self.path.split("?")[0]))
                if route is None:
                    self.send_error(404, "not served in this test")
                    return
                route.served += 1
                if route.hang:
                    server.closing.wait()
                    return
                if route.served <= route.fail_first or route.status != 200:
                    self.send_error(
                        route.status if route.status != 200 else 500, "failing on purpose"
                    )
                    return
                self.send_response(200)
                self.send_header("Content-Type", route.content_type)
                self.send_header("Content-Length", str(len(route.body)))
                self.end_headers()
                end = len(route.body) if route.truncate_at is None else route.truncate_at
                self.wfile.write(route.body[:end])
                if route.truncate_at is not None:
                    self.wfile.flush()
                    self.close_connection = True

            def log_message(self, *args) -> None:  # quiet
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def add(self, path: str, body: bytes, **options) -> str:
        self.routes[path] = Route(body, **options)
        return self.url(path)

    def url(self, path: str) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}{path}"

    def close(self) -> None:
        self.closing.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join()
