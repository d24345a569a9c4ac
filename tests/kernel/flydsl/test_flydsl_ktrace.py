"""The FlyDSL K1's ktrace build (``build_k1(..., ktrace=True)``), compile-only: its ISA
has a ktrace record (``s_memrealtime`` and two scalar stores) at every stage, poll and
put site, ``kda-sim isa`` names every poll's range and finds nothing, and every CTA's
events, as the ISA lays them out, are the ones the ktrace reader expects of its program
(:func:`kda_sim.kernels.k1.ktrace.expected_events`). The default build has none of it,
whatever ``FLYDSL_KTRACE_ENABLE`` says."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pytest

from kda_kernel.flydsl.toolchain import missing
from kda_sim.isa import analyze_path
from kda_sim.isa import cfg as cfg_mod
from kda_sim.isa import ktrace as isa_ktrace
from kda_sim.isa.model import polls_behind_weights
from kda_sim.isa.parser import parse
from kda_sim.isa.presets import K1_ARGS
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.constants import GEMV0, GEMV_TASKS, NA
from kda_sim.kernels.k1.ktrace import MARK, POP, PUSH, expected_events
from kda_sim.kernels.k1.spec import STAGES
from kda_sim.protocol.handoffs import handoffs_of
from kda_sim.protocol.space import CellSpace

pytestmark = [pytest.mark.flydsl, pytest.mark.skipif(missing() is not None, reason=str(missing()))]

# (R, L, arch, gate_local, bounded): both archs, gfx942's windowed gemv (S = 4), two tasks
# a CTA (R = 4), gate_local's one PART poll over the tokens, and the build `kernel run
# --watchdog-ms --ktrace` launches (bounded-wait + delta: LLVM moves the pop's event word
# between SGPR pairs on its way to the records there)
SHAPES = [
    (1, 1, "gfx942", False, False),
    (2, 1, "gfx950", False, False),
    (1, 4, "gfx942", False, False),
    (4, 1, "gfx950", False, False),
    (2, 2, "gfx950", True, False),
    (1, 1, "gfx950", False, True),
]
RECORD_STORES = 2  # a ktrace record: one s_memrealtime, two s_buffer_store_dwordx4
HEADER_STORES = 2  # the wave's header slot, written once at the kernel's start
EVENTS_PER_WAVE = 255  # flydsl's EVENTS_PER_WAVE less the wave's header slot
PAYLOAD_INT64 = 1 << 31 | 1 << 27  # a packed word's payload bit and type 1 (int64)


def _build(
    tmp: Path, r: int, l_: int, arch: str, gate_local: bool, bounded: bool = False, **kw: bool
):
    from kda_kernel.flydsl.k1 import build_k1

    cfg = LaunchConfig(r, l_, gate_local=gate_local)
    if bounded:
        kw |= {"bounded": True, "delta": True}
    return build_k1(cfg, arch, tmp / f"{arch}_R{r}_L{l_}_{gate_local}_{sorted(kw.items())}", **kw)


@pytest.fixture(scope="module")
def builds(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("k1_ktrace")
    return {s: _build(root, *s, ktrace=True) for s in SHAPES}


def isa_events(b) -> list[tuple[int, str, str]]:
    """(line, kind, name) of every ktrace event of the build's ISA, in text order: the
    records the analyzer reads (``kda_sim.isa.ktrace``), ranges paired and named."""
    [kernel] = parse(b.built.isa.read_text(), where=str(b.built.isa)).kernels
    evs, notes = isa_ktrace.events(kernel, cfg_mod.build(kernel))
    assert notes == []
    ranges, notes = isa_ktrace.ranges(kernel, evs, b.ktrace_names)
    assert notes == []
    by_id = {i: n for n, i in b.ktrace_names.items()}
    out = [(e.line, MARK, by_id[e.event_id]) for e in evs if e.kind == isa_ktrace.KIND_MARK]
    for r in ranges:
        out += [(r.begin_line, PUSH, r.name), (r.end_line, POP, r.name)]
    assert len(out) == len(evs)
    return sorted(out)


def by_stage(events: list[tuple[int, str, str]]) -> dict[str, list[tuple[str, str]]]:
    """Each stage's events in text order, its own push and pop included."""
    spans = {name: (a, b) for (a, k, name), (b, _, _) in _stage_pairs(events)}
    out: dict[str, list[tuple[str, str]]] = {s: [] for s in spans}
    for line, kind, name in events:
        stage = next(s for s, (a, b) in spans.items() if a <= line <= b)
        out[stage].append((kind, name))
    return out


def _stage_pairs(events: list[tuple[int, str, str]]):
    pushes = [e for e in events if e[1] == PUSH and e[2] in STAGES]
    pops = [e for e in events if e[1] == POP and e[2] in STAGES]
    return [(p, next(q for q in pops if q[2] == p[2] and q[0] > p[0])) for p in pushes]


@pytest.mark.parametrize("shape", SHAPES)
def test_every_site_has_a_record_and_isa_passes(builds: dict, shape: tuple) -> None:
    b = builds[shape]
    text = b.built.isa.read_text()
    evs = isa_events(b)
    assert text.count("s_memrealtime") >= len(evs)  # the stamps read it too
    assert text.count("s_buffer_store_dwordx4") == RECORD_STORES * len(evs) + HEADER_STORES
    report = analyze_path(
        b.built.isa, arg_layout=K1_ARGS, accept=polls_behind_weights(b.cfg), bounded=b.bounded
    )
    assert report.findings == [], report.render()
    assert not [n for n in report.notes if "ktrace" in n]
    [kernel] = report.kernels
    # every poll lies in its own site's range (the name table beside the ISA names it)
    assert kernel.polls and all(
        p.ktrace_range == f'"poll {p.label.split(" ", 1)[1]}"' for p in kernel.polls
    )
    table = json.loads(Path(f"{b.built.isa}.ktrace.json").read_text())
    assert table == b.ktrace_names
    # a retries mark carries its count (packed word: mark, int64 payload, payload bit)
    retries = {n for _, kind, n in evs if kind == MARK and n.startswith("retries ")}
    assert retries == {f"retries {p.label.split(' ', 1)[1]}" for p in kernel.polls}
    for name in retries:
        assert f"0x{b.ktrace_names[name] | PAYLOAD_INT64:x}" in text, name


@pytest.mark.parametrize("shape", SHAPES)
def test_each_ctas_events_are_what_the_reader_expects(builds: dict, shape: tuple) -> None:
    """CTA by CTA, the program's events (``expected_events``) are its stages' events in
    the ISA, each stage's run once a (stage, task): the static sites of the kernel, the
    kda ones in the task loop. The one guarded site: a gemv group past in_proj's end
    puts nothing and its mark is skipped (the model's program has no put there)."""
    b = builds[shape]
    stages = by_stage(isa_events(b))
    space = CellSpace.of(b.cfg)
    programs = handoffs_of(b.cfg).launch.programs
    calls = {"PART": b.cfg.S} if b.cfg.gate_local else {}  # one PART poll a token
    for cta, prog in enumerate(programs):
        want = expected_events(prog, space, calls)
        past_end = cta >= GEMV0 and 2 * (cta - NA) + 1 >= GEMV_TASKS  # its rg1
        got: list[tuple[str, str]] = []
        for kind, name in want:
            if kind == PUSH and name in STAGES:
                site = stages[name]
                if name == "gemv1" and past_end:
                    site = [e for e in site if e != (MARK, "put PROJ")]
                got += site
        assert got == want, f"CTA {cta}"
        assert len(want) <= EVENTS_PER_WAVE


def test_counts_per_cta(builds: dict) -> None:
    """The counts the reader takes of a CTA, at R = 4 (two tasks on CTAs 0 .. 127)."""
    b = builds[(4, 1, "gfx950", False, False)]
    space = CellSpace.of(b.cfg)
    progs = handoffs_of(b.cfg).launch.programs
    counts = Counter(kind for kind, _ in expected_events(progs[0], space))
    # attn: 3 stages, 3 polls, 4 puts; a task: 5 stages, 5 polls, 2 puts; two tasks; a
    # poll's retries a mark of its own
    polls = 3 + 2 * 5
    assert counts == {PUSH: 3 + polls + 2 * 5, POP: 3 + polls + 2 * 5, MARK: 4 + 2 * 2 + polls}


def test_default_build_has_no_ktrace_even_with_the_env(tmp_path: Path) -> None:
    """``FLYDSL_KTRACE_ENABLE=1`` does not turn tracing on in a default build: its ISA is
    the same bytes as without it, with no ktrace record."""
    plain = _build(tmp_path / "a", 1, 1, "gfx950", False)
    saved = os.environ.get("FLYDSL_KTRACE_ENABLE")
    os.environ["FLYDSL_KTRACE_ENABLE"] = "1"
    try:
        env_on = _build(tmp_path / "b", 1, 1, "gfx950", False)
    finally:
        if saved is None:
            os.environ.pop("FLYDSL_KTRACE_ENABLE", None)
        else:
            os.environ["FLYDSL_KTRACE_ENABLE"] = saved
    a, b = plain.built.isa.read_bytes(), env_on.built.isa.read_bytes()
    assert a == b
    assert b"s_buffer_store_dwordx4" not in a and not plain.ktrace and not plain.ktrace_names
