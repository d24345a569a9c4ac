"""A trace that is not the launch its header names is refused, naming the first
mismatch: mutated copies of the bundled traces (written to tmp_path), through the
checker, ``compare``, ``simulate --like`` and the app's upload."""

from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from kda_sim.cli import main
from kda_sim.engine import simulate
from kda_sim.errors import TraceFormatError
from kda_sim.importers import read_kernel_trace, trace_files
from kda_sim.importers.chrome import parse_kernel_trace
from kda_sim.importers.claimed_launch import check_claimed_launch
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.machine.profile import load_profile


def parse_upload(name: str, data: bytes):  # the app's upload path (needs the app extra)
    pytest.importorskip("streamlit")
    from kda_sim.app.data import parse_upload as parse

    return parse(name, data)


TRACES = Path(__file__).resolve().parents[2] / "traces"


@pytest.fixture(scope="module")
def r1l2() -> dict[str, Any]:
    return json.loads(gzip.decompress((TRACES / "k1_h200_R1_L2.json.gz").read_bytes()))


def _events(d: dict[str, Any], cta: int, ph: str = "X") -> list[dict[str, Any]]:
    """The trace's complete events (stage spans, polls) on CTA ``cta``'s track."""
    return [e for e in d["traceEvents"] if e.get("tid") == cta and e.get("ph") == ph]


def _refused(d: dict[str, Any]) -> str:
    with pytest.raises(TraceFormatError) as e:
        check_claimed_launch(parse_kernel_trace(d, "t.json"), "t.json")
    assert str(e.value).startswith("t.json: ")
    return str(e.value)


@pytest.mark.parametrize("name", [p.name for p in trace_files(TRACES)])
def test_the_bundled_traces_are_their_launches(name: str) -> None:
    check_claimed_launch(read_kernel_trace(TRACES / name), name)


@pytest.mark.parametrize("cfg", [LaunchConfig(1, 1), LaunchConfig(2, 2, gate_local=True)])
def test_simulated_launches_are_their_launches(cfg: LaunchConfig) -> None:
    check_claimed_launch(simulate(cfg, load_profile("h200"), seed=1).timeline, "sim")


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("R", 2, "CTA 2: 7 polls recorded, its program has 8"),
        ("L", 1, "CTA 1: stage[1] 'gate': its program runs no such stage"),
        ("kda0", 3, "CTA 0: stage[3] 'k.stage' of task 0"),
        ("gate_local", True, "CTA 0: stage[1] 'gate'"),
        ("blocks", 200, "200"),
    ],
)
def test_a_relabelled_trace_is_refused(r1l2, field: str, value: Any, words: str) -> None:
    d = copy.deepcopy(r1l2)
    d["otherData"]["meta"][field] = value
    assert words in _refused(d)


def test_a_role_swapped(r1l2) -> None:
    d = copy.deepcopy(r1l2)
    d["otherData"]["ctas"][0]["role"] = "gemv"
    assert "CTA 0: role 'gemv', its program's is 'attn'" in _refused(d)


def test_a_unit_the_gpu_does_not_have(r1l2) -> None:
    d = copy.deepcopy(r1l2)
    d["otherData"]["ctas"][5]["unit"] = 132  # an H200 has SMs 0 .. 131
    assert "CTA 5: ran on unit 132, but the GPU has units 0 .. 131" in _refused(d)


def test_a_stage_ending_before_it_starts(tmp_path: Path) -> None:
    tl = read_kernel_trace(TRACES / "k1_h200_R1_L1.json.gz")
    s = tl.ctas[7].stages[1]
    s.start, s.end = s.end + 100.0, s.start
    with pytest.raises(TraceFormatError, match=r"CTA 7 stage\[1\] .* ends .* before it starts"):
        check_claimed_launch(tl, "t")


def test_a_poll_satisfied_before_its_issue_and_a_stage_outside_its_cta() -> None:
    tl = read_kernel_trace(TRACES / "k1_h200_R1_L1.json.gz")
    p = next(p for p in tl.ctas[3].polls if p.satisfied is not None)
    p.satisfied = p.first_issue - 500.0
    with pytest.raises(TraceFormatError, match=r"CTA 3 poll\[\d+\]: satisfied"):
        check_claimed_launch(tl, "t")
    tl = read_kernel_trace(TRACES / "k1_h200_R1_L1.json.gz")
    tl.ctas[9].stages[-1].end = tl.ctas[9].end + 10_000.0  # type: ignore[operator]
    with pytest.raises(TraceFormatError, match=r"CTA 9 stage\[\d+\] .* outside the CTA"):
        check_claimed_launch(tl, "t")


def test_half_the_polls_deleted() -> None:
    tl = read_kernel_trace(TRACES / "k1_h200_R2_L2.json.gz")
    c = next(c for c in tl.ctas if len(c.polls) >= 2)
    del c.polls[: len(c.polls) // 2]
    with pytest.raises(TraceFormatError, match=rf"CTA {c.cta}: \d+ polls recorded"):
        check_claimed_launch(tl, "t")


def test_compare_and_like_and_upload_refuse_it(tmp_path: Path, r1l2, capsys) -> None:
    d = copy.deepcopy(r1l2)
    d["otherData"]["meta"]["R"] = 2
    bad = tmp_path / "relabelled.json"
    bad.write_text(json.dumps(d))
    assert main(["compare", str(bad), "--gpu", "h200"]) == 2
    err = capsys.readouterr().err
    assert "relabelled.json: CTA 2: 7 polls recorded" in err and "Traceback" not in err
    assert main(["simulate", "--like", str(bad)]) == 2
    assert "CTA 2: 7 polls recorded" in capsys.readouterr().err
    with pytest.raises(TraceFormatError, match="CTA 2: 7 polls recorded"):
        parse_upload("relabelled.json", bad.read_bytes())


def test_a_ticket_launch_places_each_item_on_any_cta_that_takes_tickets() -> None:
    """kda_tickets: which CTA runs a kda task is the run's (whoever took its ticket), so a
    CTA's kda stages are its loop's items' and its polls are at least its static ones; a
    task no item has, or fewer polls than the static ones, is still refused."""
    cfg = LaunchConfig(1, 1, onw_first=True, kda_tickets=True)
    tl = simulate(cfg, load_profile("h200-k1"), occupancy=2).timeline
    check_claimed_launch(tl)
    bad = copy.deepcopy(tl)
    bad.ctas[7].stages[-1].task = 96  # no ticket item is task 96 at R = 1
    with pytest.raises(TraceFormatError, match="task 96"):
        check_claimed_launch(bad)
    short = copy.deepcopy(tl)
    short.ctas[60].polls = []  # a gemv CTA's XRDY poll
    with pytest.raises(TraceFormatError, match="and more"):
        check_claimed_launch(short)


def test_a_finished_cta_missing_a_stage_is_refused(tmp_path: Path, r1l2, capsys) -> None:
    """Every gemv stage span deleted (polls kept): compare said "conforms" and the gemv
    stages left its table; now the first such CTA is named."""
    d = copy.deepcopy(r1l2)
    d["traceEvents"] = [
        e
        for e in d["traceEvents"]
        if not (e.get("cat") == "stage" and str(e.get("name", "")).startswith("gemv"))
    ]
    with pytest.raises(TraceFormatError, match=r"CTA 56: finished, but recorded no gemv0 span"):
        check_claimed_launch(parse_kernel_trace(d, "t.json"), "t.json")
    path = tmp_path / "t.json"
    path.write_text(json.dumps(d))
    assert main(["compare", str(path)]) == 2
    assert "CTA 56: finished, but recorded no gemv0 span" in capsys.readouterr().err


TRACES = Path(__file__).parents[2] / "traces"


def _relabelled(tmp_path: Path, **fields: object) -> Path:
    d = json.loads(gzip.decompress((TRACES / "k1_h200_R2_L2.json.gz").read_bytes()))
    d["otherData"]["meta"].update(fields)
    p = tmp_path / "relabelled.json"
    p.write_text(json.dumps(d))
    return p


@pytest.mark.parametrize("nb", [1, 4, 16])
def test_a_real_trace_relabelled_to_another_nb_is_refused_naming_nb(
    tmp_path: Path, nb: int
) -> None:
    check_claimed_launch(read_kernel_trace(_relabelled(tmp_path)), "as measured")  # nb = 8: its own
    p = _relabelled(tmp_path, nb=nb)
    with pytest.raises(
        TraceFormatError, match=rf"PART polls recorded \[1008\] cells.*nb = {nb}"
    ) as e:
        check_claimed_launch(read_kernel_trace(p), str(p))
    assert e.value.what == "nb"


def test_a_relabelled_onw_first_is_not_evidenced_and_passes(tmp_path: Path) -> None:
    # a K1 trace records no loads: the docs say so (kda_sim/kernels/k1/trace_evidence.py)
    p = _relabelled(tmp_path, onw_first=False, nw_first=False)
    check_claimed_launch(read_kernel_trace(p), str(p))


@pytest.mark.parametrize(
    ("kernel", "params"),
    [
        ("gridbarrier", {}),
        ("gridbarrier", {"last_resets": True}),  # a branch on the add's old value
        ("splitk", {"tiles": 4}),
        ("cuml_gridsync", {}),
    ],
)
def test_a_counter_kernel_s_launch_is_its_launch(kernel: str, params: dict[str, Any]) -> None:
    """The engine records a counter ``Wait`` as a poll and an ``Atomic`` (a ``Reset``: a
    cell) as a put: a simulated launch of a kernel built of them is the launch its header
    names (it was refused: "2 polls recorded, its program has 0"); a wait deleted is not,
    unless the wait is in a branch (which branch runs is the run's: the count outside
    the branches is the least a CTA records)."""
    from dataclasses import replace

    from kda_sim.kernels.registry import get

    spec = get(kernel)
    cfg = replace(spec.default_config(), **params)
    tl = simulate(cfg, load_profile(getattr(spec, "gpu", None) or "h200", spec), seed=1).timeline
    assert any(c.polls for c in tl.ctas) and any(c.puts for c in tl.ctas)
    check_claimed_launch(tl, "sim")
    c = next(c for c in tl.ctas if c.polls)
    c.polls.pop()
    if params.get("last_resets"):
        check_claimed_launch(tl, "sim")
        return
    with pytest.raises(TraceFormatError, match=rf"CTA {c.cta}: \d+ polls recorded"):
        check_claimed_launch(tl, "sim")
