"""``cardinal serve``: run the browser board with uvicorn."""
from __future__ import annotations

import argparse
import ipaddress
import logging
import os
import socket
import sys
import threading
import webbrowser


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _hostport(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _why(e: OSError) -> str:
    """``address already in use`` from ``[Errno 98] Address already in use``."""
    text = e.strerror or str(e) or type(e).__name__
    return text[:1].lower() + text[1:]


def listen(host: str, port: int) -> list[socket.socket]:
    """Listening sockets on ``host``:``port``, for uvicorn: every address ``host`` resolves to
    (as uvicorn would bind them), or with port 0 the first one only (one port to announce).
    Binding here, before uvicorn starts, turns a busy port or an unknown host into an
    ``OSError`` to report. Raises ``OSError`` (``socket.gaierror`` included)."""
    infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    socks: list[socket.socket] = []
    seen = set()
    try:
        for family, kind, proto, _, addr in infos:
            if (family, addr) in seen:
                continue
            seen.add((family, addr))
            sock = socket.socket(family, kind, proto)
            socks.append(sock)
            if os.name == "posix":      # as asyncio: restart at once on a port left in TIME_WAIT
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6 and hasattr(socket, "IPPROTO_IPV6"):
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind(addr)
            sock.listen(2048)
            if port == 0:
                break
    except BaseException:
        for sock in socks:
            sock.close()
        raise
    return socks


class _HoldStartupErrors(logging.Filter):
    """Holds back uvicorn's error log lines until the server has started: a failed start is
    reported as one ``error:`` line instead."""

    def __init__(self, server):
        super().__init__()
        self.server = server
        self.held: list[str] = []

    def filter(self, record: logging.LogRecord) -> bool:
        if self.server.started or record.levelno < logging.ERROR:
            return True
        msg = record.getMessage().strip()
        self.held.append(msg.splitlines()[0] if msg else "")
        return False


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="cardinal serve", description="A browser board: play Cardinal, analyse, "
                                 "watch a running match. Open the printed address in a browser.")
    ap.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1, this machine only)")
    ap.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 picks a free one)")
    ap.add_argument("--open", action="store_true", help="open the page in the default browser")
    ap.add_argument("--max-engines", type=int, default=os.cpu_count() or 1,
                    help="engine processes running at once (default: the number of cores)")
    ap.add_argument("--idle-timeout", type=float, default=900.0,
                    help="seconds without activity before a game's engine is stopped (default 900)")
    ap.add_argument("--watch", default=None, metavar="PGN",
                    help="PGN file of a running `cardinal match` to show in Watch mode")
    return ap


def main(argv=None) -> int:
    a = parser().parse_args(argv)
    if a.max_engines < 1:
        print("error: --max-engines must be at least 1", file=sys.stderr)
        return 2
    if not 0 <= a.port <= 65535:
        print("error: --port must be 0..65535", file=sys.stderr)
        return 2
    if a.idle_timeout <= 0:
        print("error: --idle-timeout must be positive", file=sys.stderr)
        return 2
    try:
        import uvicorn
        from .app import create_app
    except ImportError as e:
        print(f"error: cardinal serve needs the web extra ({e.name} is missing): "
              f"pip install 'cardinal-engine[web]'", file=sys.stderr)
        return 2
    try:
        socks = listen(a.host, a.port)
    except OSError as e:
        print(f"error: cannot listen on {_hostport(a.host, a.port)}: {_why(e)}", file=sys.stderr)
        return 2
    port = socks[0].getsockname()[1]
    if not _loopback(a.host):
        print(f"warning: bound to {a.host}: anyone who can reach this address can use the board and "
              f"start engines on this machine", file=sys.stderr)
    hosts = ["127.0.0.1", "localhost", "::1", "[::1]"] if _loopback(a.host) else None
    app = create_app(max_engines=a.max_engines, idle_timeout=a.idle_timeout, watch_path=a.watch,
                     allowed_hosts=hosts)
    config = uvicorn.Config(app, host=a.host, port=port, log_level="warning", ws="auto")
    server = uvicorn.Server(config)
    held = _HoldStartupErrors(server)
    logging.getLogger("uvicorn.error").addFilter(held)

    def announce():
        # the address once uvicorn serves on the sockets (the real port with --port 0)
        import time
        while not server.started and not server.should_exit:
            time.sleep(0.02)
        if server.started:
            url = f"http://{_hostport(a.host, port)}/"
            print(f"Cardinal browser board at {url} (Ctrl-C to stop)", flush=True)
            if a.open:
                webbrowser.open(url)

    threading.Thread(target=announce, daemon=True).start()
    try:
        server.run(sockets=socks)
    except KeyboardInterrupt:
        pass
    except SystemExit as e:      # uvicorn exits when it cannot start (code 3)
        if e.code in (0, None):
            return 0
        why = next((h for h in reversed(held.held) if h), f"uvicorn exited with status {e.code}")
        print(f"error: cannot start the browser board on {_hostport(a.host, port)}: {why}", file=sys.stderr)
        return 2
    finally:
        for sock in socks:
            sock.close()
    return 0
