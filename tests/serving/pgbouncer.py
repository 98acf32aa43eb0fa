"""A throwaway PgBouncer in front of the local PostgreSQL, for tests and bench/load.py.

Debian's package (``apt-get install -y pgbouncer``; scripts/test.sh installs it). The
pooler listens on a free loopback port, trusts the users it is told about (PostgreSQL on
loopback trusts them too, as in CI) and forwards every database name as it is.

    with pgbouncer(users=["retaguarda_app"], pool_size=1) as port:
        psycopg.connect(f"host=127.0.0.1 port={port} user=retaguarda_app dbname=...")
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

INSTALL_HINT = "PgBouncer is not installed: apt-get install -y pgbouncer (scripts/test.sh does)"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _answers(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
        return True
    return False


@contextlib.contextmanager
def pgbouncer(
    *,
    users: list[str],
    server_host: str = "127.0.0.1",
    server_port: int = 5432,
    pool_mode: str = "transaction",
    pool_size: int = 1,
    max_client_conn: int = 500,
) -> Iterator[int]:
    """Run PgBouncer for the block; yields its port. ``pool_size`` server connections per
    (database, user): 1 forces every client of a user onto the same server connection."""
    binary = shutil.which("pgbouncer") or (
        "/usr/sbin/pgbouncer" if Path("/usr/sbin/pgbouncer").exists() else None
    )
    if binary is None:
        raise RuntimeError(INSTALL_HINT)
    port = _free_port()
    workdir = Path(tempfile.mkdtemp(prefix="pgbouncer-"))
    (workdir / "userlist.txt").write_text("".join(f'"{u}" ""\n' for u in users))
    (workdir / "pgbouncer.ini").write_text(
        "\n".join(
            [
                "[databases]",
                f"* = host={server_host} port={server_port}",
                "[pgbouncer]",
                "listen_addr = 127.0.0.1",
                f"listen_port = {port}",
                "unix_socket_dir =",
                "auth_type = trust",
                f"auth_file = {workdir / 'userlist.txt'}",
                f"pool_mode = {pool_mode}",
                f"default_pool_size = {pool_size}",
                "min_pool_size = 0",
                "reserve_pool_size = 0",
                f"max_client_conn = {max_client_conn}",
                # Transaction pooling resets nothing between clients: only what a
                # transaction sets locally is safe. That is exactly what is under test.
                "server_reset_query =",
                "ignore_startup_parameters = extra_float_digits",
                f"logfile = {workdir / 'pgbouncer.log'}",
                f"pidfile = {workdir / 'pgbouncer.pid'}",
                "",
            ]
        )
    )
    command = [binary, "-q", str(workdir / "pgbouncer.ini")]
    if os.geteuid() == 0:
        # PgBouncer refuses to run as root; CI and this machine are root.
        user = pwd.getpwnam("postgres")
        os.chmod(workdir, 0o755)
        for path in [workdir, *workdir.iterdir()]:
            os.chown(path, user.pw_uid, user.pw_gid)
        command[1:1] = ["-u", "postgres"]
    process = subprocess.Popen(
        command,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 15
        while not _answers(port):
            if process.poll() is not None or time.monotonic() > deadline:
                log = workdir / "pgbouncer.log"
                detail = log.read_text() if log.exists() else ""
                stderr = process.stderr.read().decode() if process.stderr else ""
                raise RuntimeError(f"PgBouncer did not start: {stderr}{detail}")
            time.sleep(0.05)
        yield port
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=5)
        if process.stderr:
            process.stderr.close()
        shutil.rmtree(workdir, ignore_errors=True)
