"""Our FlyDSL K1 compiled for gfx942 and gfx950 (compile-only): its traced put / poll /
publish record equals the protocol model's, and its ISA keeps the seed's role rule."""

from __future__ import annotations

import time
from collections import defaultdict
from pathlib import Path

import pytest

from kda_kernel.flydsl.toolchain import missing
from kda_sim.isa import analyze_path, analyze_text
from kda_sim.isa.analyze import load_lines
from kda_sim.isa.model import polls_behind_weights, stage_ops
from kda_sim.isa.presets import K1_ARGS
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.constants import GEMV0, PER_WAVE, WAVES
from kda_sim.kernels.k1.program import build_launch
from kda_sim.protocol.ops import Load

pytestmark = [pytest.mark.flydsl, pytest.mark.skipif(missing() is not None, reason=str(missing()))]

# (R, L, arch): every role and several shapes, small enough for CI's 3-minute budget
SHAPES = [(1, 1, "gfx942"), (1, 1, "gfx950"), (2, 1, "gfx942"), (1, 2, "gfx950")]
BUDGET_S = 180.0
XRDY_WEIGHT_LOADS = PER_WAVE * 4  # rg0: 7 chunks a wave, 4 dwordx4 a chunk


@pytest.fixture(scope="module")
def builds(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[int, int, str], object]:
    from kda_kernel.flydsl.k1 import build_k1

    out = {}
    root = tmp_path_factory.mktemp("k1")
    t0 = time.perf_counter()
    for r, l_, arch in SHAPES:
        out[(r, l_, arch)] = build_k1(LaunchConfig(r, l_), arch, root / f"{arch}_R{r}_L{l_}")
    out["seconds"] = time.perf_counter() - t0
    return out


def test_all_targets_compile_within_budget(builds: dict) -> None:
    assert builds["seconds"] < BUDGET_S
    for key in SHAPES:
        isa = builds[key].built.isa.read_text()
        assert f"amdgcn-amd-amdhsa-unknown-{key[2]}" in isa
        assert "s_sleep 1" in isa and "s_memrealtime" in isa


@pytest.mark.parametrize("key", SHAPES)
def test_traced_record_equals_the_protocol_model(builds: dict, key: tuple[int, int, str]) -> None:
    b = builds[key]
    traced: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for stage, region, kind in b.records:
        traced[stage].append((region, kind))
    model = {s: ops for s, ops in stage_ops(b.cfg).items() if ops}
    assert dict(traced) == model


@pytest.mark.parametrize("key", SHAPES)
def test_isa_keeps_the_role_rule(builds: dict, key: tuple[int, int, str]) -> None:
    b = builds[key]
    accepted = polls_behind_weights(b.cfg)
    report = analyze_path(b.built.isa, arg_layout=K1_ARGS, accept=accepted)
    assert report.findings == [], report.render()
    [kernel] = report.kernels
    model_polls = {
        f"{s} {region}"
        for s, ops in stage_ops(b.cfg).items()
        for region, kind in ops
        if kind == "poll"
    }
    assert {p.label for p in kernel.polls} == model_polls
    # the MFMA gemv keeps rg0 (112 VGPRs) and rg1's first chunks in registers without
    # spilling; spill code would wait for the weights before the poll and hide them
    assert kernel.vgpr_spills == 0
    for p in kernel.polls:
        weights = p.by_class.get("weights", 0)
        if p.label in accepted:
            assert p.accepted and weights == XRDY_WEIGHT_LOADS
            assert p.bytes_by_class["weights"] == XRDY_WEIGHT_LOADS * 16
            # a wave's share of the model's rg0 load (16 rows of w_in, 8 waves a CTA)
            rg0 = next(op for op in build_launch(b.cfg).programs[GEMV0].ops if isinstance(op, Load))
            assert p.wave_bytes_by_class["weights"] == rg0.nbytes // WAVES
        else:
            assert weights == 0, p
    [publish] = kernel.publishes
    assert publish.label == "mix XRDY" and publish.drained


def test_markers_and_stamps_do_not_make_the_finding(tmp_path: Path) -> None:
    """Without markers or timeline (both add side-effecting code), the gemv CTAs' XRDY
    poll still waits behind rg0's weights."""
    from kda_kernel.flydsl.k1 import build_k1

    b = build_k1(LaunchConfig(1, 1), "gfx942", tmp_path, timeline=False, markers=False)
    isa = b.built.isa.read_text()
    assert "s_memrealtime" not in isa and "kda-sim:" not in isa
    report = analyze_path(b.built.isa, arg_layout=K1_ARGS)
    weights = [p.by_class.get("weights", 0) for p in report.kernels[0].polls]
    assert weights.count(XRDY_WEIGHT_LOADS) == 1
    assert sorted(weights)[:-1] == [0] * (len(weights) - 1)


def test_kernel_arguments_follow_the_isa_preset() -> None:
    import inspect

    from kda_kernel.flydsl.k1 import make_kernel
    from kda_kernel.flydsl.k1_ctx import Recorder

    kernel, _ = make_kernel(LaunchConfig(1, 1), timeline=True, markers=True, recorder=Recorder())
    fn = getattr(kernel, "_func", None) or getattr(kernel, "func", None) or kernel
    params = list(inspect.signature(inspect.unwrap(fn)).parameters)
    assert params == [name for name, _ in K1_ARGS]


@pytest.mark.parametrize("key", SHAPES[:2])
def test_stamps_are_flushed_once_after_the_last_stamp(
    builds: dict, key: tuple[int, int, str]
) -> None:
    """A global store per stamp would sit on later vmcnt waits: every store to the
    stamps argument comes after every s_memrealtime."""
    from kda_sim.isa.memops import MemKind, mem_op
    from kda_sim.isa.parser import parse
    from kda_sim.isa.provenance import argument

    text = builds[key].built.isa.read_text()
    [kernel] = parse(text).kernels
    names = [n for n, _ in K1_ARGS]
    stamp_lines = [i.line for i in kernel.instrs if i.mnemonic == "s_memrealtime"]
    flush = []
    for ins in kernel.instrs:
        op = mem_op(ins)
        if op is not None and op.kind is MemKind.STORE:
            arg = argument(kernel, ins.index, op.resource)
            if arg is not None and names[kernel.args.index(arg)] == "stamps":
                flush.append(ins.line)
    # start, slice / gate / mix or load_x / gemv0 / gemv1, five a task (+ last-task copies), end
    assert len(stamp_lines) >= 1 + 3 + 5 + 1
    assert flush and min(flush) > max(stamp_lines)


@pytest.mark.parametrize("key", SHAPES)
def test_every_build_writes_its_launch_record(builds: dict, key: tuple[int, int, str]) -> None:
    """The record (stamp_launch) is constants of the build: its format word and the low
    dword of its R | L << 16 | nb << 32 word are literals of the ISA."""
    from kda_sim.kernels.k1.stamp_launch import launch_record

    isa = builds[key].built.isa.read_text()
    mark, shape, _ = launch_record(builds[key].cfg)
    assert f", {mark:#x}\n" in isa and f", {shape & 0xFFFFFFFF:#x}\n" in isa


@pytest.mark.parametrize("key", SHAPES)
def test_pairs_and_x_rows_are_device_scope(builds: dict, key: tuple[int, int, str]) -> None:
    """The seed's scope: every load and store of the mailbox pairs (scratch) and of the
    flagged x rows (xbuf) carries sc1 and not sc0, agent scope by LLVM's AMDGPU memory
    model for gfx942 / gfx950 (``sc0 sc1`` would be system scope), as
    ``kda_sim.isa.memops.scope`` reads the ISA."""
    from kda_sim.isa.memops import Scope, mem_op, scope
    from kda_sim.isa.parser import parse
    from kda_sim.isa.provenance import argument

    b = builds[key]
    [kernel] = parse(b.built.isa.read_text()).kernels
    names = [n for n, _ in K1_ARGS]
    seen: dict[str, set[Scope]] = defaultdict(set)
    for ins in kernel.instrs:
        op = mem_op(ins)
        arg = argument(kernel, ins.index, op.resource) if op is not None else None
        if arg is None or names[kernel.args.index(arg)] not in ("scratch", "xbuf"):
            continue
        seen[f"{names[kernel.args.index(arg)]} {op.kind}"].add(scope(op, key[2]))
        assert "sc1" in op.cache and "sc0" not in op.cache, ins.text
    # both buffers are both written and read in every build
    assert len(seen) == 4 and all(v == {Scope.AGENT} for v in seen.values()), seen


LOWER_BOUND_F32 = "0xc0a00000"  # -5.0, kernel/reference.py's LOWER_BOUND


@pytest.mark.parametrize("key", SHAPES)
def test_isa_has_the_seeds_numerics(builds: dict, key: tuple[int, int, str]) -> None:
    """What the CPU transcription (test_flydsl_kda_numerics.py) assumes, in the ISA: bf16
    rounding to nearest even (gfx950's v_cvt_pk_bf16_f32; gfx942's add-0x7fff-plus-lsb
    sequence), the lower bound -5.0, 16-bit conv state / on_w loads, and 16-bit stores:
    the conv window (SL entries, where st_idx[req, 0] > 0) and core_out's one."""
    b = builds[key]
    isa = b.built.isa.read_text()
    if key[2] == "gfx950":
        assert "v_cvt_pk_bf16_f32" in isa
    else:
        assert "0x7fff" in isa and "v_bfe_u32" in isa
    assert LOWER_BOUND_F32 in isa
    assert "buffer_load_ushort" in isa
    assert isa.count("buffer_store_short") == b.cfg.SL + 1


def test_x_rows_over_the_seeds_limit_are_refused_on_both_targets(tmp_path: Path) -> None:
    from kda_kernel.flydsl.k1 import build_k1

    for arch in ("gfx942", "gfx950"):  # S = 10: 140 KiB of x rows > the seed's 136 KiB
        with pytest.raises(ValueError, match="seed's 136 KiB"):
            build_k1(LaunchConfig(5, 2), arch, tmp_path / arch)


# the seed's builds besides the default, both archs each: (R, L, variants, build options)
VARIANTS = [
    (1, 1, "gfx942", {}, {"bounded": True}),
    (2, 1, "gfx950", {}, {"bounded": True}),
    (2, 1, "gfx942", {"gate_local": True}, {}),
    (1, 2, "gfx950", {"gate_local": True}, {}),
    (2, 1, "gfx942", {}, {"delta": True}),
    (1, 2, "gfx950", {}, {"delta": True, "bounded": True}),
    # gfx942 at S = 4: the windowed gemv in the debug + delta and the gate_local builds
    (2, 2, "gfx942", {}, {"delta": True, "bounded": True}),
    (2, 2, "gfx942", {"gate_local": True}, {}),
    # all three at once: SGPR pressure spills the kernarg pointers to VGPR lanes
    (1, 2, "gfx950", {"gate_local": True}, {"delta": True, "bounded": True}),
]


@pytest.fixture(scope="module")
def variants(tmp_path_factory: pytest.TempPathFactory) -> list[object]:
    from kda_kernel.flydsl.k1 import build_k1

    root = tmp_path_factory.mktemp("k1v")
    return [
        build_k1(LaunchConfig(r, l_, **v), arch, root / f"{n}", **opts)
        for n, (r, l_, arch, v, opts) in enumerate(VARIANTS)
    ]


def _args_touched(b: object) -> dict[str, set[str]]:
    """Kernel argument -> the kinds of memory op the ISA makes on it."""
    from kda_sim.isa.memops import mem_op
    from kda_sim.isa.parser import parse
    from kda_sim.isa.provenance import argument

    [kernel] = parse(b.built.isa.read_text()).kernels  # type: ignore[attr-defined]
    names = [n for n, _ in K1_ARGS]
    out: dict[str, set[str]] = defaultdict(set)
    for ins in kernel.instrs:
        op = mem_op(ins)
        arg = argument(kernel, ins.index, op.resource) if op is not None else None
        if arg is not None:
            out[names[kernel.args.index(arg)]].add(str(op.kind))
    return out


@pytest.mark.parametrize("n", range(len(VARIANTS)))
def test_every_memory_op_of_a_variant_names_its_argument(variants: list, n: int) -> None:
    """The analyzer traces every load and store back to a kernel argument (through
    SGPR spills to VGPR lanes too), so each is classed by what it touches."""
    from kda_sim.isa.memops import mem_op
    from kda_sim.isa.parser import parse
    from kda_sim.isa.provenance import argument

    [kernel] = parse(variants[n].built.isa.read_text()).kernels
    lost = [
        (ins.index, ins.mnemonic)
        for ins in kernel.instrs
        if (op := mem_op(ins)) is not None
        and op.resource is not None
        and argument(kernel, ins.index, op.resource) not in kernel.args
    ]
    assert lost == []


@pytest.mark.parametrize("n", range(len(VARIANTS)))
def test_variant_builds_follow_the_model_and_pass_the_isa_checks(variants: list, n: int) -> None:
    """Each variant's traced record is the protocol model's (gate_local: the mix polls
    PART, no gate stage, no WGT), and ``kda-sim isa`` finds nothing in its ISA, with
    ``--bounded`` for the bounded-wait builds (every poll loop compares a clock read)."""
    from kda_sim.cli import main

    b = variants[n]
    assert_record_is_the_models(b)
    bounded = VARIANTS[n][4].get("bounded", False)
    report = analyze_path(
        b.built.isa, arg_layout=K1_ARGS, accept=polls_behind_weights(b.cfg), bounded=bounded
    )
    assert report.findings == [], report.render()
    polls = report.kernels[0].polls
    assert {p.label for p in polls} == {
        f"{s} {region}" for s, ops in stage_ops(b.cfg).items() for region, kind in ops
        if kind == "poll"
    }  # fmt: skip
    assert all(p.bounded == bounded for p in polls), [(p.label, p.bounded) for p in polls]
    flag = ["--bounded"] if bounded else []
    assert main(["isa", "--preset", "k1", *flag, str(b.built.isa)]) == 0


def test_the_default_build_is_unbounded_and_the_isa_check_says_so(builds: dict) -> None:
    """The production build has no bound: ``kda-sim isa --bounded`` names every poll."""
    b = builds[(1, 1, "gfx950")]
    report = analyze_path(b.built.isa, arg_layout=K1_ARGS, accept=polls_behind_weights(b.cfg),
                          bounded=True)  # fmt: skip
    polls = report.kernels[0].polls
    assert polls and not any(p.bounded for p in polls)
    assert [f.kind for f in report.findings] == ["poll_unbounded"] * len(polls)


@pytest.mark.parametrize("n", [0, 1, 5, 6])
def test_bounded_builds_write_give_up_records(variants: list, n: int) -> None:
    """The give-up path: health is read (the abort word), claimed by a compare-and-swap
    (one record a CTA) and written; a build without the bound never touches health."""
    b = variants[n]
    isa = b.built.isa.read_text()
    assert "buffer_atomic_cmpswap" in isa
    assert {"load", "store", "atomic"} <= _args_touched(b)["health"]
    assert "health" not in _args_touched(variants[2])


@pytest.mark.parametrize("n", [4, 5, 6])
def test_delta_builds_write_the_prefix_back(variants: list, builds: dict, n: int) -> None:
    """With delta: delta is read and the prefix written back (the seed's prefix out);
    without, neither."""
    touched = _args_touched(variants[n])
    assert "load" in touched["delta"] and "store" in touched["prefix"]
    plain = _args_touched(builds[(2, 1, "gfx942")])
    assert "delta" not in plain and plain["prefix"] == {"load"}


def placed(b: object, arg: str) -> tuple[list[int], dict[str, int]]:
    """The ISA lines of a build's loads of ``arg`` and of each poll (by label), after
    checking the role rule holds for it."""
    text = b.built.isa.read_text()  # type: ignore[attr-defined]
    loads = load_lines(text, arg_layout=K1_ARGS).get(arg, [])
    report = analyze_text(text, arg_layout=K1_ARGS, accept=polls_behind_weights(b.cfg))  # type: ignore[attr-defined]
    assert report.findings == [], report.render()
    return loads, {p.label: p.line for p in report.kernels[0].polls}


def assert_record_is_the_models(b: object) -> None:
    traced: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for stage, region, kind in b.records:  # type: ignore[attr-defined]
        traced[stage].append((region, kind))
    assert dict(traced) == {s: ops for s, ops in stage_ops(b.cfg).items() if ops}  # type: ignore[attr-defined]


def test_nw_first_asks_for_in_nw_before_the_attn_polls(builds: dict, tmp_path: Path) -> None:
    """LaunchConfig.nw_first: the compiled code loads in_nw before the mix's first poll
    (the seed's order, the default build's: after the MSQ poll), and the record of puts
    and polls is the model's either way."""
    from kda_kernel.flydsl.k1 import build_k1

    first = build_k1(LaunchConfig(1, 1, nw_first=True), "gfx950", tmp_path)
    loads, polls = placed(first, "in_nw")
    assert loads and max(loads) < polls["mix WGT"] < polls["mix MSQ"]
    loads, polls = placed(builds[(1, 1, "gfx950")], "in_nw")
    assert loads and min(loads) > polls["mix MSQ"]
    assert_record_is_the_models(first)


# (R, L): one task a CTA at most (96 tasks), and R = 3 (288 tasks): CTAs kda0 .. kda0 + 31
# run two through the task loop, each iteration holding its own on_w from k.stage to k.norm
ONW_SHAPES = [(1, 1), (3, 1)]


@pytest.mark.parametrize("shape", ONW_SHAPES)
def test_onw_first_asks_for_on_w_before_the_kda_polls(
    builds: dict, tmp_path: Path, shape: tuple[int, int]
) -> None:
    """LaunchConfig.onw_first: the compiled code loads on_w once, among k.stage's loads
    before the kda task's first poll (k.conv PROJ); the default build (the seed's order)
    once, after k.norm's ONRM+PROJ poll; the record of puts and polls is the same."""
    from kda_kernel.flydsl.k1 import build_k1

    r, l_ = shape
    first = build_k1(LaunchConfig(r, l_, onw_first=True), "gfx950", tmp_path / "onw_first")
    seed = builds.get((r, l_, "gfx950")) or build_k1(LaunchConfig(r, l_), "gfx950", tmp_path)
    loads, polls = placed(first, "on_w")
    assert len(loads) == 1 and loads[0] < polls["k.conv PROJ"]
    # k.conv's poll is the task's first in the code too (no kda poll hoisted above it)
    assert polls["k.conv PROJ"] == min(line for lab, line in polls.items() if lab.startswith("k."))
    loads, polls = placed(seed, "on_w")
    assert len(loads) == 1 and loads[0] > polls["k.norm ONRM+PROJ"]
    # only the load moved: the puts / polls / publishes traced are the default build's
    # (which test_traced_record_equals_the_protocol_model checks at R = 1; at R = 3 the
    # loop body is traced once, the model lists a two-task CTA's both tasks)
    assert first.records == seed.records


@pytest.mark.parametrize("schedule", ["kda_tickets", "gemv_tickets"])
def test_a_ticket_launch_is_not_built(schedule: str, tmp_path: Path) -> None:
    """The static placement is all the FlyDSL K1 builds: never silently for tickets."""
    from kda_kernel.flydsl.k1 import build_k1

    with pytest.raises(ValueError, match="static placement only"):
        build_k1(LaunchConfig(1, 1, **{schedule: True}), "gfx950", tmp_path)
    assert list(tmp_path.iterdir()) == []
