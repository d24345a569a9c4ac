"""Work shared among a Dask cluster's workers (``--cluster``): a local cluster of two
workers gives the single-process sweep, check and fit exactly; an address with no
scheduler, or a server that is not one, is refused at once (exit 2), never waited on."""

from __future__ import annotations

import socket
import sys
import threading
import time
from collections.abc import Iterator
from functools import partial

import pytest

pytest.importorskip(
    "distributed", reason="the 'cluster' extra is not installed: pip install -e '.[cluster]'"
)

from kda_sim import cluster as cluster_mod
from kda_sim.checks.launch_check import check_launch
from kda_sim.cli import main
from kda_sim.cluster import Cluster, parse
from kda_sim.compare import scoring
from kda_sim.compare.calibrate import evaluate, fit_profile, prepare
from kda_sim.engine import simulate
from kda_sim.errors import InvalidInput
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.machine.profile import GpuProfile, load_profile
from kda_sim.parallel import Workers, pmap


@pytest.fixture(scope="module")
def local2() -> Iterator[Cluster]:
    c = Cluster("local:2")
    yield c
    c.close()


@pytest.fixture(scope="module")
def h200() -> GpuProfile:
    return load_profile("h200-stock")


def test_addresses_parsed_and_bad_ones_refused() -> None:
    assert parse("local:3") == (None, 3)
    assert parse("local")[0] is None and parse("local")[1] >= 1
    for good in ("tcp://10.0.0.5:8786", "sched.lan:8786", "tls://[::1]:8786"):
        assert parse(good) == (good, None)
    for bad in ("local:0", "local:x", "sched.lan", "sched.lan:0", "h:99999", "http://h:1"):
        with pytest.raises(InvalidInput, match="--cluster"):
            parse(bad)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_no_scheduler_at_the_address_is_refused_within_the_timeout() -> None:
    t0 = time.monotonic()
    with pytest.raises(InvalidInput, match=r"no scheduler answered within 1 s"):
        Cluster(f"tcp://127.0.0.1:{_free_port()}", timeout=1)
    assert time.monotonic() - t0 < 6


def test_a_server_that_is_not_a_scheduler_is_refused() -> None:
    """An HTTP server's reply, read as Dask's handshake, fails at once."""
    srv = socket.create_server(("127.0.0.1", 0))

    def answer() -> None:
        conn, _ = srv.accept()
        with conn:
            conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
            time.sleep(2)

    threading.Thread(target=answer, daemon=True).start()
    t0 = time.monotonic()
    with srv, pytest.raises(InvalidInput, match="not a Dask scheduler"):
        Cluster(f"tcp://127.0.0.1:{srv.getsockname()[1]}", timeout=5)
    assert time.monotonic() - t0 < 5


def test_the_flag_exits_2_with_the_missing_extra_or_with_jobs(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "kda_sim.cluster", None)  # as if not installed
    assert main(["sweep", "--gpu", "h200", "--cluster", "local:2"]) == 2
    assert "pip install 'kda-sim[cluster]'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:  # one or the other: argparse refuses both
        main(["sweep", "--gpu", "h200", "--jobs", "2", "--cluster", "local:2"])
    assert e.value.code == 2 and "not allowed with argument" in capsys.readouterr().err


def test_sweep_on_a_local_cluster_equals_one_process(capsys: pytest.CaptureFixture[str]) -> None:
    """The whole command: the flag, the connection, the map, the output, byte for byte."""
    assert main(["sweep", "--gpu", "h200", "--json", "--jobs", "1"]) == 0
    alone = capsys.readouterr().out
    assert main(["sweep", "--gpu", "h200", "--json", "--cluster", "local:2"]) == 0
    assert capsys.readouterr().out == alone and '"invalid"' in alone
    assert not cluster_mod._OPEN  # the command's local cluster ended with it


def test_items_in_order_errors_and_progress_on_a_cluster(local2: Cluster) -> None:
    with Workers(local2, progress=True) as w:
        assert w.map(partial(pow, 3), list(range(7)), cost=lambda i: i) == [3**i for i in range(7)]
        assert w._bar.n == w._bar.total == 7  # one bar, every item counted
    with pytest.raises(ValueError, match="'x'"):  # a worker's error reaches the caller
        pmap(int, ["1", "x"], local2, progress=False)


def test_a_running_scheduler_by_its_address(local2: Cluster) -> None:
    """``--cluster ADDRESS``: a client of a cluster someone else started (here the local
    one's scheduler); closing it leaves that cluster running."""
    by_address = Cluster(local2.client.scheduler.address)
    try:
        assert by_address.slots == 2
        assert pmap(abs, [-1, -2, -3], by_address, progress=False) == [1, 2, 3]
    finally:
        by_address.close()
    assert pmap(abs, [-4, -5], local2, progress=False) == [4, 5]


def test_a_checks_seeded_runs_on_a_cluster_equal_one_process(local2: Cluster, h200) -> None:
    cfg = LaunchConfig(1, 2)
    with Workers(local2, progress=False) as w:
        shared = check_launch(cfg, h200, seeds=(1, 2), advice=False, fixes=False, workers=w)
    alone = check_launch(cfg, h200, seeds=(1, 2), advice=False, fixes=False)
    assert shared == alone and shared.ok


def test_a_fit_on_a_cluster_equals_one_process(local2: Cluster, h200) -> None:
    b, u = h200.costs["k.recur"]
    truth = h200.with_params(**{"cost_k.recur": (1.5 * b, 1.5 * u)})
    traces = [prepare(simulate(LaunchConfig(1, n), truth).timeline, f"R1L{n}") for n in (1, 2)]
    serial = fit_profile(h200, traces, budget=4, cost_passes=1, progress=False)
    shared = fit_profile(h200, traces, budget=4, cost_passes=1, progress=False, jobs=local2)
    assert shared.history == serial.history and shared.profile == serial.profile
    assert evaluate(h200, traces, jobs=local2) == evaluate(h200, traces)
    # each Scorer's traces left the workers with it (they outlive it)
    held = local2.client.run(lambda: len(scoring._ADOPTED))
    assert len(held) == 2 and set(held.values()) == {0}
