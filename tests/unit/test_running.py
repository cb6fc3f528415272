"""A service is up when its own process answers (``LC-Pid``), not whatever answers 200 on its port; a
taken port is an error that names it, who holds it and the setting that moves it (issue 31, item 7)."""

import contextlib
import http.server
import os
import socket
import subprocess
import sys
import threading

from lecturecopilot.netports import PortTaken, free_port, listener_pids, port_free
from lecturecopilot_ops.stack import wait_until_up


@contextlib.contextmanager
def _server(pid_header: str | None):
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            self.send_response(200)
            if pid_header is not None:
                self.send_header("LC-Pid", pid_header)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/readyz"
    finally:
        server.shutdown()
        server.server_close()


def test_another_process_answering_200_is_not_ours_being_up():
    ours = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        with _server(None) as url:  # another program: 200, and no pid of ours
            assert not wait_until_up(url, ours, 1.5, interval_s=0.1)
            assert wait_until_up(url, ours, 1.5, own=False)  # for a server that does not say who it is
        with _server(str(os.getpid())) as url:  # one of ours, but another process
            assert not wait_until_up(url, ours, 1.5, interval_s=0.1)
        with _server(str(ours.pid)) as url:
            assert wait_until_up(url, ours, 5)
    finally:
        ours.kill()
        ours.wait()


def _listed(inode: str) -> bool:
    """Whether /proc's TCP tables show a listening socket with this inode."""
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError), open(table) as f:
            if any(line.split()[3:4] == ["0A"] and line.split()[9:10] == [inode] for line in f):
                return True
    return False


def test_a_taken_port_is_named_with_who_holds_it_and_what_moves_it():
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        assert not port_free("127.0.0.1", port)
        # Where /proc shows this process's sockets, the holder is found; where it does not (a sandbox
        # whose /proc belongs to another namespace: CI's clean clone met one), none is named.
        inode = str(os.fstat(s.fileno()).st_ino)
        ours = f"/proc/{os.getpid()}/fd/{s.fileno()}"
        seen = _listed(inode) and os.path.lexists(ours) and os.readlink(ours) == f"socket:[{inode}]"
        assert listener_pids(port) == ([os.getpid()] if seen else [])
        e = PortTaken(port, "the gateway service", "LC_GATEWAY_PORT", holder=f"pid {os.getpid()}")
        assert f"port {port} " in str(e) and "LC_GATEWAY_PORT" in str(e) and "LC_PORT_OFFSET" in str(e)
    assert port_free("127.0.0.1", port)  # closed: free again (TIME_WAIT does not count)
