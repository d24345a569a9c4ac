"""Run the persistent K1 under Triton's interpreter, one Python thread a program.

The stock interpreter runs programs one after another, so a program that spins on a
later program's put never returns. Here every program gets a thread, ``program_id`` is
made thread-local, and each poll load yields the GIL (so producers get to run). This is
a CPU test harness for the protocol and the numerics, not a model of GPU timing.
Needs ``TRITON_INTERPRET=1`` set before ``triton`` is imported.
"""

from __future__ import annotations

import inspect
import threading
import time
from typing import Any

_local = threading.local()
_lock = threading.Lock()
_scopes: dict[str, Any] = {}  # module -> its patch scope, for the current run
# a program that keeps polling backs off geometrically, so ~200 spinning threads leave the
# CPU (and the GIL) to the producers; any ordinary store resets it
BACKOFF_S = (0.001, 0.25, 1.5)  # first, cap, factor


_failed = threading.Event()  # a program raised: every spinning program stops too


class Aborted(RuntimeError):
    pass


def _spin() -> None:
    if _failed.is_set():
        raise Aborted("another program raised")
    n = getattr(_local, "spins", 0)
    _local.spins = n + 1
    first, cap, factor = BACKOFF_S
    time.sleep(min(cap, first * factor**n))


_patched = False


def _patch_builder() -> None:
    global _patched
    if _patched:
        return
    import triton.runtime.interpreter as interp

    builder = interp.interpreter_builder
    base = type(builder)

    class ThreadLocalBuilder(base):  # type: ignore[misc, valid-type]
        @property
        def grid_idx(self) -> tuple[int, int, int]:
            return _local.grid_idx

        @grid_idx.setter
        def grid_idx(self, v: tuple[int, int, int]) -> None:
            _local.grid_idx = v

        def create_masked_load(
            self, ptrs, mask, other, cache_modifier, eviction_policy, is_volatile
        ):  # type: ignore[no-untyped-def]
            if is_volatile:
                _spin()
            return super().create_masked_load(
                ptrs, mask, other, cache_modifier, eviction_policy, is_volatile
            )

        def create_masked_store(self, ptrs, value, mask, cache_modifier, eviction_policy):  # type: ignore[no-untyped-def]
            _local.spins = 0
            return super().create_masked_store(ptrs, value, mask, cache_modifier, eviction_policy)

        def create_atomic_rmw(self, rmw_op, ptr, val, mask, sem, scope):  # type: ignore[no-untyped-def]
            _spin()
            # the interpreter's read-modify-write is several numpy steps: without the lock
            # two programs' ticket takes can read the same old value (a ticket taken twice,
            # another never: the launch hangs)
            with _lock:
                return super().create_atomic_rmw(rmw_op, ptr, val, mask, sem, scope)

    builder.__class__ = ThreadLocalBuilder

    def call(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        # a device-function call: the stock one re-patches triton.language on every call
        # (inspect.getmembers, slow); once a module per run is enough
        mod = self.fn.__module__
        if mod not in _scopes:
            with _lock:
                if mod not in _scopes:
                    _scopes[mod] = interp._patch_lang(self.fn)
                    _fix_index()
        return self.rewrite()(*args, **kwargs)

    interp.InterpretedFunction.__call__ = call
    _patched = True


def _fix_index() -> None:
    # run-time scalars (R, nb) reach range() as 1-element arrays: the stock __index__
    # only takes 0-d ones
    import numpy as np
    import triton.language.core as core

    core.tensor.__index__ = lambda self: int(np.asarray(self.handle.data).item())  # type: ignore[method-assign]


def _device_modules(jit_fn: Any) -> dict[str, Any]:
    """Every module whose device functions ``jit_fn`` reaches, with one function of each.
    The device code spans modules (mailbox, record, the roles), and each is patched before
    any program runs: a patch resets ``tensor.__index__`` for every thread, so a module
    first patched mid-run could break another program's ``range`` over a run-time value."""
    import triton.runtime.interpreter as interp

    found: dict[str, Any] = {}
    todo = [jit_fn]
    while todo:
        f = todo.pop()
        mod = f.fn.__module__
        if mod in found:
            continue
        found[mod] = f.fn
        todo += [v for v in f.fn.__globals__.values() if isinstance(v, interp.InterpretedFunction)]
    return found


def run_threaded(
    jit_fn: Any,
    n_programs: int,
    *args: Any,
    timeout_s: float = 1800.0,
    progress_s: float = 0.0,
    **kwargs: Any,
) -> None:
    """Launch ``jit_fn`` (an InterpretedFunction) over a 1-D grid, a thread a program."""
    import triton.runtime.interpreter as interp

    if not isinstance(jit_fn, interp.InterpretedFunction):
        raise RuntimeError("set TRITON_INTERPRET=1 before importing triton")
    _patch_builder()
    fn = jit_fn.rewrite()
    ex = interp.GridExecutor(fn, jit_fn.arg_names, (n_programs,))
    argspec = inspect.getfullargspec(ex.fn)
    kwargs = {k: v for k, v in kwargs.items() if k in argspec.args}
    args_hst, kwargs_hst = ex._init_args_hst(args, kwargs)
    scope = interp._patch_lang(ex.fn)
    _scopes[ex.fn.__module__] = scope
    for mod, fn in _device_modules(jit_fn).items():
        if mod not in _scopes:
            _scopes[mod] = interp._patch_lang(fn)
    _fix_index()
    errors: list[BaseException] = []
    _failed.clear()
    try:
        call = inspect.getcallargs(ex.fn, *args_hst, **kwargs_hst)
        call = {k: v if k in ex.constexprs else interp._implicit_cvt(v) for k, v in call.items()}
        interp.interpreter_builder.set_grid_dim(n_programs, 1, 1)

        def body(x: int) -> None:
            try:
                interp.interpreter_builder.set_grid_idx(x, 0, 0)
                ex.fn(**call)
            except BaseException as e:  # reported after the join
                if not isinstance(e, Aborted):
                    errors.append(e)
                _failed.set()

        threads = [threading.Thread(target=body, args=(x,), daemon=True) for x in range(n_programs)]
        for t in threads:
            t.start()
        deadline = time.monotonic() + timeout_s
        last = time.monotonic()
        for t in threads:
            while t.is_alive() and time.monotonic() < deadline:
                t.join(1.0)
                if progress_s and time.monotonic() - last > progress_s:
                    last = time.monotonic()
                    alive = [i for i, th in enumerate(threads) if th.is_alive()]
                    print(f"[interp] {len(alive)} programs running: {alive[:12]}", flush=True)
        alive = [i for i, t in enumerate(threads) if t.is_alive()]
        if alive:
            raise TimeoutError(f"programs still running after {timeout_s} s: {alive[:16]}")
    finally:
        for sc in _scopes.values():
            sc.restore()
        _scopes.clear()
    if errors:
        raise errors[0]
    ex._restore_args_dev(args, args_hst, kwargs, kwargs_hst)
