"""Independent work shared among the workers of a Dask cluster (``--cluster``): a sweep's
shapes, the dynamic checks' seeded runs and a calibration's traces beyond one machine.

A :class:`Cluster` is a client connected to a running scheduler (``--cluster ADDRESS``:
one the user started, ``dask scheduler`` and ``dask worker ADDRESS --nthreads 1`` on
each machine) or to a cluster of local worker processes it starts itself
(``--cluster local[:N]``). :class:`kda_sim.parallel.Workers` maps on it through
:meth:`Cluster.pool`, a ``concurrent.futures`` executor like its process pool: the same
map, the same order of results, the same progress bar; only where the items run differs.
The simulation is deterministic (a seed, not the process, decides its latencies), so the
results equal one process's.

Dask's ``distributed`` rather than Ray: it is pure Python (wheels of a few MB, no object
store or C++ runtime of its own), a local cluster needs no service (a test starts one of
two workers in a few seconds), and it offers the ``concurrent.futures`` executor the
process pool already is, so the cluster is a backend of the pool, not a second code path.
Ray's strengths (a shared-memory object store, actors, GPU scheduling) buy nothing for
independent pure-Python tasks of 0.1 to 2 s whose inputs are a few kB.

This module imports ``distributed`` at its top: it is imported only where ``--cluster``
is given (:func:`kda_sim.commands.common.jobs_of`), which turns a missing extra into
exit 2 naming it (:data:`EXTRA`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures as cf
import logging
import re
import uuid
from collections.abc import Callable
from typing import Any

from distributed import Client, LocalCluster, WorkerPlugin
from distributed import comm as dask_comm

from kda_sim.errors import InvalidInput
from kda_sim.parallel import MAX_JOBS, default_jobs, main_hidden, prepare

EXTRA = "cluster"  # pip install 'kda-sim[cluster]'
LOCAL = "local"  # --cluster local[:N]: a cluster of N worker processes on this machine
# a scheduler that does not answer within this many seconds is not there: exit 2, no hang
CONNECT_TIMEOUT_S = 10.0
# [tcp|tls|ws|wss://]HOST:PORT, the scheduler's address as `dask scheduler` prints it
_ADDRESS = re.compile(r"(?:(?:tcp|tls|ws|wss)://)?(?:[\w.-]+|\[[0-9A-Fa-f:.]+\]):(\d{1,5})")
USAGE = "a scheduler's address (tcp://HOST:PORT) or local[:N] (N local workers)"


def parse(text: str) -> tuple[str | None, int | None]:
    """``--cluster TEXT``: (the scheduler's address, None) or (None, local workers)."""
    t = text.strip()
    if t == LOCAL or t.startswith(LOCAL + ":"):
        n = t.partition(":")[2]
        if not n:
            return None, default_jobs()
        if not n.isdigit() or not 1 <= int(n) <= MAX_JOBS:
            raise InvalidInput(f"--cluster {text}: local:N with N in 1..{MAX_JOBS}", what="cluster")
        return None, int(n)
    m = _ADDRESS.fullmatch(t)
    if m is None or not 1 <= int(m.group(1)) <= 65535:
        raise InvalidInput(f"--cluster {text}: {USAGE}", what="cluster")
    return t, None


class _Setup(WorkerPlugin):
    """What a :class:`kda_sim.parallel.Workers` runs in each worker before its items
    (``kda_sim.parallel.prepare``: the parent's kernels, then the caller's initializer),
    in those that join later too; ``finalizer`` when the Workers ends (a cluster's
    workers outlive it, unlike a process pool's)."""

    def __init__(
        self,
        kernels: Any,
        initializer: Callable[..., None] | None,
        initargs: tuple[Any, ...],
        finalizer: Callable[..., None] | None,
        finalargs: tuple[Any, ...],
    ) -> None:
        self.start = (kernels, initializer, initargs)
        self.end = (finalizer, finalargs)

    def setup(self, worker: Any) -> None:
        prepare(*self.start)

    def teardown(self, worker: Any) -> None:
        finalizer, finalargs = self.end
        if finalizer is not None:
            finalizer(*finalargs)


class _Pool(cf.Executor):
    """The cluster as a ``concurrent.futures`` executor for one Workers: its setup
    registered with the scheduler, removed again at shutdown."""

    def __init__(self, client: Client, setup: _Setup) -> None:
        self._client = client
        # unique across the clients a scheduler serves: a name registered again replaces
        self._name = f"kda-sim-{uuid.uuid4().hex}"
        client.register_plugin(setup, name=self._name)
        # pure=False: every item a task of its own, with no hashing of its arguments
        self._executor = client.get_executor(pure=False)

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> cf.Future[Any]:
        return self._executor.submit(fn, *args, **kwargs)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self._executor.shutdown(wait=wait and not cancel_futures)
        if self._name:
            self._client.unregister_worker_plugin(self._name)
            self._name = ""


def _probe(where: str, address: str, timeout: float) -> None:
    """Connect to ``address`` and shake hands as a Dask client does, in an event loop of
    its own: a server that is not a Dask scheduler (an HTTP proxy answering any port) is
    refused here, where a :class:`Client` would fail as deep as a ``MemoryError`` (the
    reply's first bytes read as a length) and then wait twice ``timeout`` to close."""

    async def shake() -> None:
        comm = await dask_comm.connect(address, timeout=timeout)
        await comm.close()

    try:
        asyncio.run(asyncio.wait_for(shake(), timeout))
    except (OSError, TimeoutError):
        raise
    except Exception as e:  # whatever a stranger's bytes make of the handshake
        raise InvalidInput(
            f"--cluster {where}: not a Dask scheduler (the handshake failed: {type(e).__name__})",
            what="cluster",
        ) from None


class Cluster:
    """A client of a Dask cluster (``where``: :func:`parse`'s forms), connected at once:
    a scheduler that does not answer, or has no worker, within ``timeout`` seconds is
    refused (``InvalidInput``), never waited on. ``slots``: the tasks it runs at once."""

    def __init__(self, where: str, timeout: float = CONNECT_TIMEOUT_S) -> None:
        address, local = parse(where)
        self.where = where
        self._local: LocalCluster | None = None
        try:
            if address is None:
                # one thread a worker: the simulation is pure Python (the GIL), and a
                # worker then runs one item at a time, as a process of the pool does
                with main_hidden(True):  # spawned workers: kda_sim.parallel says why
                    self._local = LocalCluster(
                        n_workers=local,
                        threads_per_worker=1,
                        processes=True,
                        dashboard_address=None,
                        silence_logs=logging.ERROR,
                    )
                self.client = Client(self._local, set_as_default=False)
            else:
                _probe(where, address, timeout)
                self.client = Client(address, timeout=timeout, set_as_default=False)
        except (OSError, TimeoutError) as e:
            self.close()
            raise InvalidInput(
                f"--cluster {where}: no scheduler answered within {timeout:g} s"
                + (f" ({e})" if str(e) else ""),
                what="cluster",
            ) from None
        try:
            self.client.wait_for_workers(1, timeout=timeout)
        except TimeoutError:
            self.close()
            raise InvalidInput(
                f"--cluster {where}: the scheduler has no worker (none joined within "
                f"{timeout:g} s; start them with `dask worker ADDRESS --nthreads 1`)",
                what="cluster",
            ) from None

    @property
    def slots(self) -> int:
        return max(1, sum(self.client.nthreads().values()))

    def pool(
        self,
        kernels: Any,
        initializer: Callable[..., None] | None = None,
        initargs: tuple[Any, ...] = (),
        finalizer: Callable[..., None] | None = None,
        finalargs: tuple[Any, ...] = (),
    ) -> cf.Executor:
        """An executor on the cluster whose workers each run
        ``kda_sim.parallel.prepare(kernels, initializer, initargs)`` before their first
        item, and ``finalizer(*finalargs)`` at its shutdown."""
        return _Pool(self.client, _Setup(kernels, initializer, initargs, finalizer, finalargs))

    def close(self) -> None:
        client = getattr(self, "client", None)
        if client is not None:
            client.close()
            self.client = None  # type: ignore[assignment]
        if self._local is not None:
            self._local.close()
            self._local = None


_OPEN: dict[str, Cluster] = {}


def connect(where: str) -> Cluster:
    """The cluster ``where`` names, connected once in this process (a command's every
    map, and its several :class:`Workers`, share it) until :func:`close_all`."""
    c = _OPEN.get(where)
    if c is None:
        c = _OPEN[where] = Cluster(where)
    return c


def close_all() -> None:
    """Close every cluster :func:`connect` opened (the local ones' workers end)."""
    while _OPEN:
        _OPEN.popitem()[1].close()
