"""``cardinal serve``: run the browser board with uvicorn."""
from __future__ import annotations

import argparse
import ipaddress
import os
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
    if not _loopback(a.host):
        print(f"warning: bound to {a.host}: anyone who can reach this address can use the board and "
              f"start engines on this machine", file=sys.stderr)
    hosts = ["127.0.0.1", "localhost", "::1", "[::1]"] if _loopback(a.host) else None
    app = create_app(max_engines=a.max_engines, idle_timeout=a.idle_timeout, watch_path=a.watch,
                     allowed_hosts=hosts)
    config = uvicorn.Config(app, host=a.host, port=a.port, log_level="warning", ws="auto")
    server = uvicorn.Server(config)

    def announce():
        # uvicorn binds before it sets `started`; print the real port (--port 0).
        import time
        while not server.started and not server.should_exit:
            time.sleep(0.02)
        if server.started:
            port = server.servers[0].sockets[0].getsockname()[1] if server.servers else a.port
            host = a.host if ":" not in a.host else f"[{a.host}]"
            url = f"http://{host}:{port}/"
            print(f"Cardinal browser board at {url} (Ctrl-C to stop)", flush=True)
            if a.open:
                webbrowser.open(url)

    threading.Thread(target=announce, daemon=True).start()
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    return 0
