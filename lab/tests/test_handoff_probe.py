"""The hand-off probe runs the K1's own ``_put`` and ``_poll``: it must compile against
their current signatures (sm_90, here without a GPU), hold the loads and CTA-wide counts
each poll shape implies, and its summary must read rounds from the stamps it writes."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("triton")

from lab import handoff_probe as hp


def _compile(**kw: int) -> dict:
    """The probe compiled for sm_90 (its ``asm``: ptx, cubin) with these constexprs."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    cx = {"ROUNDS": 8, "PATTERN": 0, "SHAPE": 0, "SPIN": 0, "SLEEP_NS": 128, "BY_LANE": 0} | kw
    sig = {"scratch": "*i64", "stamps": "*i64", "tag": "i32"} | {k: "constexpr" for k in cx}
    assert set(sig) == set(hp.handoff_probe.arg_names)
    return triton.compile(
        ASTSource(hp.handoff_probe, sig, cx),
        target=GPUTarget("cuda", 90, 32),
        options={"num_warps": 8, "maxnreg": 128},
    ).asm


@pytest.mark.parametrize(("shape", "slots"), [(0, 4), (1, 1), (2, 1)])
def test_each_poll_shape_compiles_with_one_count_a_register_slot(shape: int, slots: int) -> None:
    ptx = _compile(SHAPE=shape)["ptx"]
    # a poll site's first try and its retry loop: one relaxed load and one CTA-wide count
    # a register slot each ([64, 16] over 256 threads is 4 slots, 256 or 64 lanes one)
    assert ptx.count("ld.relaxed.gpu.global.b64") == 2 * slots
    assert ptx.count("bar.red.popc") == 2 * slots
    assert "nanosleep" not in ptx  # no spinning CTAs in this build


def test_spinning_ctas_back_off_and_acquire() -> None:
    ptx = _compile(PATTERN=2, SHAPE=1, SPIN=1)["ptx"]
    assert "nanosleep.u32 128" in ptx
    assert "fence.acq_rel.gpu" in ptx


def test_lanes_spin_apart_in_one_asm_loop_a_register_slot() -> None:
    """The by-lane form: the loop is inside the asm (a branch back to the load), once a
    register slot of the [64, 16] shape; ptxas takes the repeated block-local labels."""
    asm = _compile(BY_LANE=64)
    assert asm["ptx"].count("@p bra SPIN") == 2 * 4  # first try and retry loop, 4 slots each
    assert "setp.lt.and.u32 p, n, 64, p" in asm["ptx"]
    assert asm["cubin"]  # ptxas accepted it


def _stamps(rounds: int, put: np.ndarray, sat: np.ndarray) -> np.ndarray:
    s = np.zeros((256, 4 * rounds), np.int64)
    s[: put.shape[0], 0 : 2 * rounds : 2] = put
    s[: sat.shape[0], 1 : 2 * rounds : 2] = sat
    return s


def test_summary_reads_rounds_and_the_last_put() -> None:
    rounds = 4
    # CTA c puts round r at 1000 r + c and sees it at 1000 r + 700
    put = np.array([[1000 * r + c for r in range(rounds)] for c in range(hp.NA)])
    sat = np.array([[1000 * r + 700 for r in range(rounds)] for _ in range(hp.NA)])
    got = hp.summarise(_stamps(rounds, put, sat), "all", rounds)
    assert got["round_us"] == [1.0] * (hp.NA * 2)
    assert got["last_put_to_seen_us"] == [pytest.approx(0.7 - 0.055)] * (hp.NA * 2)
    tries = hp.summarise(_stamps(rounds, put, sat), "try", rounds)["try_us"]
    assert tries[0] == pytest.approx(0.7)  # CTA 0, round 2
    pair = hp.summarise(_stamps(rounds, put, sat), "pair", rounds)
    assert len(pair["round_us"]) == 2  # CTA 0 alone


def test_refuses_without_a_gpu_and_keeps_an_existing_out(tmp_path, capsys) -> None:
    import torch

    out = tmp_path / "probe.json"
    out.write_text("mine")
    code = hp.main(["--out", str(out)])
    assert code == 2
    assert out.read_text() == "mine"
    err = capsys.readouterr().err
    if torch.cuda.is_available():
        assert "exists" in err
    else:
        assert "no CUDA GPU" in err
