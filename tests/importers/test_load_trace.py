"""``load_trace`` reads a stamp tensor or ktrace file through the kernel's ``trace_decoders``
hook: the default kernel's (K1's), another kernel's own reader, or a refusal naming the
kernel and the reader it lacks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from kda_sim.cli import main
from kda_sim.errors import InvalidInput, TraceFormatError
from kda_sim.importers import decoder_for, load_trace
from kda_sim.importers.stamps import load_stamp_array
from kda_sim.kernels import registry
from kda_sim.timeline.model import CtaTrack, Meta, Timeline

PINGPONG = registry.get("pingpong")


class StampsOnly:
    """pingpong with a reader of its own [2, 2] stamp tensor (each CTA's start and end, in
    ns) and no ktrace reader."""

    name = "stampsonly"

    def __getattr__(self, attr: str) -> Any:
        return getattr(PINGPONG, attr)

    @property
    def trace_decoders(self) -> dict[str, Any]:
        return {"stamps": self.read}

    def read(self, path: Path, **cfg: Any) -> Timeline:
        arr = load_stamp_array(path)
        meta = Meta.for_launch(
            PINGPONG.config_from_dict(cfg), source="measured", gpu="h200", clock="test"
        )
        return Timeline(
            meta,
            [
                CtaTrack(b, PINGPONG.roles[b], start=float(s), end=float(e))
                for b, (s, e) in enumerate(arr)
            ],
        )


@pytest.fixture
def stampsonly(monkeypatch: pytest.MonkeyPatch) -> StampsOnly:
    spec = StampsOnly()
    monkeypatch.setitem(registry._loaded, spec.name, spec)  # found by name, for this test only
    return spec


def test_a_kernels_own_reader_reads_its_stamps(tmp_path: Path, stampsonly: StampsOnly) -> None:
    path = tmp_path / "pp.npy"
    np.save(path, np.array([[0, 500], [100, 900]], np.int64))
    tl = load_trace(path, kernel="stampsonly", rounds=2)
    assert [(c.cta, c.start, c.end) for c in tl.ctas] == [(0, 0.0, 500.0), (1, 100.0, 900.0)]
    assert tl.meta.kernel == "pingpong" and tl.meta.config().rounds == 2
    np.save(path, np.zeros((2, 2), np.float32))  # the generic loader's refusals still hold
    with pytest.raises(TraceFormatError, match="stamps are int64"):
        load_trace(path, kernel="stampsonly")


def test_a_kernel_without_the_reader_is_refused_by_name(
    tmp_path: Path, stampsonly: StampsOnly
) -> None:
    with pytest.raises(
        InvalidInput, match=r"pingpong defines no trace_decoders \(a reader of stamps"
    ):
        load_trace(tmp_path / "s.npy", kernel="pingpong", R=1, L=1)
    with pytest.raises(
        InvalidInput, match=r"stampsonly decodes no ktrace files \(it reads stamps\)"
    ):
        decoder_for("stampsonly", tmp_path / "k.pftrace.gz")
    with pytest.raises(InvalidInput, match="no kernel 'nosuch'"):
        load_trace(tmp_path / "s.npy", kernel="nosuch", R=1, L=1)


def test_k1_reads_both_kinds_and_needs_the_shape(tmp_path: Path) -> None:
    for name in ("s.npy", "k.pftrace.gz"):
        assert callable(decoder_for("k1", tmp_path / name))
        with pytest.raises(InvalidInput, match=r"does not record the launch's shape: give \['L'\]"):
            load_trace(tmp_path / name, R=1)


def test_the_cli_refuses_a_kernel_without_a_ktrace_reader(tmp_path: Path, capsys) -> None:
    trace = tmp_path / "k.pftrace.gz"
    trace.write_bytes(b"")
    argv = ["compare", str(trace), "--kernel", "gridbarrier", "--R", "1", "--L", "1"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "gridbarrier defines no trace_decoders (a reader of ktrace files)" in err
    assert "Traceback" not in err
