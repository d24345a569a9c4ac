"""K1's ktrace files (its ``trace_decoders`` hook, kind ``ktrace``): one launch's waves of a
FlyDSL ktrace ``.pftrace.gz`` (decoded by :mod:`kda_sim.importers.ktrace`, which says what
the file holds) onto K1's timeline.

How our kernel's events map to the timeline (the convention the kernel's ktrace build
follows; events with other names are counted in ``meta.extra["ignored"]``):

- a range named after a stage (``slice`` .. ``k.norm``) is that stage; for kda stages
  the payload is the task index;
- a range ``poll <LABEL>`` (LABEL as the model names the poll site, e.g. ``ONRM+PROJ``)
  is a poll: first issue at its start, satisfied at its end; its retries are the sum of
  the payloads of the instants ``retries <LABEL>`` inside it (one a call of the site's
  poll in the kernel: a wave's retries, known only at the close, whose payload FlyDSL's
  trace file drops), or its own payload where it has one;
- an instant ``put <REGION>`` is a put, payload = its first cell index.

A CTA is workgroup x; its waves are merged: a stage spans from the earliest wave's
begin to the latest wave's end, the k-th poll (put) of a stage from the waves' k-th;
its ``unit`` and ``xcd`` are its waves' CU's.

:func:`expected_events` is what this reader takes from one CTA of a launch: its program's
stages, polls and puts as the events above (FlyDSL's K1 built with ``ktrace=True``
records exactly these, in every wave).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kda_sim.errors import InvalidInput, TraceFormatError
from kda_sim.importers.caps import read_capped
from kda_sim.importers.ktrace import Span, WaveLog, launch_waves
from kda_sim.kernels.k1.config import LaunchConfig, variants_of
from kda_sim.kernels.k1.program import role_of
from kda_sim.kernels.k1.spec import STAGES
from kda_sim.timeline.model import CtaTrack, Meta, PollRecord, PutRecord, StageSpan, Timeline
from kda_sim.timeline.schema import MAX_COUNT

POLL_PREFIX = "poll "  # a range "poll <LABEL>": a poll site, first issue to satisfied
PUT_PREFIX = "put "  # an instant "put <REGION>": a put (or publish) site
RETRIES_PREFIX = "retries "  # an instant "retries <LABEL>" in a poll's range: its retries
# FlyDSL's event kinds as a CTA's expected events name them (flydsl.expr.ktrace.KIND_*)
MARK, PUSH, POP = "mark", "push", "pop"


def event_name(kind: str, what: str) -> str:
    """The event name of a poll (``kind`` "poll", ``what`` its label), a poll's retries
    ("retries", its label) or a put ("put", its region's name), as this reader reads it."""
    return {"poll": POLL_PREFIX, "retries": RETRIES_PREFIX, "put": PUT_PREFIX}[kind] + what


def expected_events(
    program: Any, space: Any, calls: Mapping[str, int] | None = None
) -> list[tuple[str, str]]:
    """The (kind, name) events one CTA's ``program`` (a protocol program of the launch
    whose cells ``space`` names) leaves in each traced wave, in order: a range a stage
    and a poll, a mark a put or publish, and in a poll's range a mark of its retries for
    each call of the site's poll (``calls``: by label where the kernel polls a site in
    more than one call, as gate_local's PART, once a token)."""
    from kda_sim.protocol.ops import Begin, End, Poll, Publish, Put

    out: list[tuple[str, str]] = []
    for op in program.ops:
        if isinstance(op, Begin):
            out.append((PUSH, op.stage))
        elif isinstance(op, End):
            out.append((POP, op.stage))
        elif isinstance(op, Poll):
            n = (calls or {}).get(op.label, 1)
            out += [(PUSH, event_name("poll", op.label))]
            out += [(MARK, event_name("retries", op.label))] * n
            out += [(POP, event_name("poll", op.label))]
        elif isinstance(op, Put | Publish):
            out.append((MARK, event_name("put", space.name(op.region))))
    return out


def _int_payload(v: Any, what: str, where: str, lo: int = 0) -> int:
    """A payload that counts (a task, retries, a cell index): an integer in ``lo`` ..
    MAX_COUNT, the bound a Chrome trace's counts have too."""
    if isinstance(v, bool) or not isinstance(v, int):
        raise TraceFormatError(f"{what}: payload {v!r:.40} is not an integer", where=where)
    if not lo <= v <= MAX_COUNT:
        raise TraceFormatError(
            f"{what}: payload {v} is outside {lo} .. {MAX_COUNT} (2^40)", where=where
        )
    return v


def to_timeline(
    waves: dict[tuple[int, str], WaveLog], cfg: LaunchConfig, gpu: str, where: str
) -> Timeline:
    ctas = [CtaTrack(b, _role(b)) for b in range(cfg.blocks)]
    ignored = 0
    per_cta: dict[int, list[WaveLog]] = defaultdict(list)
    for (cta, _wave), log in sorted(waves.items()):
        if not 0 <= cta < cfg.blocks:
            raise TraceFormatError(
                f"workgroup {cta} is outside the launch's {cfg.blocks} CTAs", where=where
            )
        per_cta[cta].append(log)
    stage_set = set(STAGES)
    for cta, logs in per_cta.items():
        track = ctas[cta]
        rec = f"{where}: WG({cta})"
        stages: dict[tuple[str, int], StageSpan] = {}
        polls: dict[tuple[str, int, int], PollRecord] = {}
        puts: dict[tuple[str, int, int], PutRecord] = {}
        for log in logs:
            track.unit, track.xcd = log.unit, log.xcd
            life = [s for s in log.spans if s.name == "Wave Span"]
            for s in life:
                track.start = s.start if track.start is None else min(track.start, s.start)
                track.end = s.end if track.end is None else max(track.end, s.end)
            own = sorted((s for s in log.spans if s.name in stage_set), key=lambda s: s.start)
            count: dict[tuple[str, int, str], int] = defaultdict(int)
            for s in own:
                task = (
                    _int_payload(s.payload, f"stage {s.name}", rec)
                    if s.name.startswith("k.")
                    else -1
                )
                key = (s.name, task)
                if not s.closed:
                    track.end = None  # the wave never left this stage
                old = stages.get(key)
                if old is None:
                    stages[key] = StageSpan(s.name, task, float(s.start), float(s.end))
                else:
                    old.start, old.end = min(old.start, s.start), max(old.end, s.end)

            def enclosing(t: int, own: list[Span] = own) -> tuple[str, int]:
                inside = [s for s in own if s.start <= t <= s.end]
                if not inside:
                    return "", -1
                s = inside[-1]
                task = s.payload if s.name.startswith("k.") else -1
                return s.name, int(task)

            wave_polls: list[tuple[Span, tuple[str, int, int]]] = []
            for s in sorted(log.spans, key=lambda s: s.start):
                if s.name in stage_set or s.name == "Wave Span":
                    continue
                if not s.name.startswith(POLL_PREFIX):
                    ignored += 1
                    continue
                label = s.name[len(POLL_PREFIX) :]
                stage, task = enclosing(s.start)
                n = count[(stage, task, s.name)]
                count[(stage, task, s.name)] += 1
                retries = None if s.payload is None else _int_payload(s.payload, s.name, rec)
                key3 = (stage + "|" + label, task, n)
                wave_polls.append((s, key3))
                p = polls.get(key3)
                sat = float(s.end) if s.closed else None
                if p is None:
                    polls[key3] = PollRecord(stage, task, label, 0, 0, float(s.start), sat, retries)
                else:
                    p.first_issue = min(p.first_issue, s.start)
                    p.satisfied = (
                        None if sat is None or p.satisfied is None else max(p.satisfied, sat)
                    )
                    if retries is not None:
                        p.retries = max(p.retries or 0, retries)
            wave_retries: dict[tuple[str, int, int], int] = defaultdict(int)
            for t, name, payload in sorted(log.instants, key=lambda i: i[0]):
                if name.startswith(RETRIES_PREFIX) and payload is not None:
                    # the poll range of its label that holds it (the earliest, where a
                    # range closes on the tick the next opens: a mark precedes its pop)
                    poll = POLL_PREFIX + name[len(RETRIES_PREFIX) :]
                    owner = next(
                        (k for s, k in wave_polls if s.name == poll and s.start <= t <= s.end),
                        None,
                    )
                    if owner is None:
                        ignored += 1
                    else:
                        wave_retries[owner] += _int_payload(payload, name, rec)
                    continue
                if not name.startswith(PUT_PREFIX):
                    ignored += 1
                    continue
                region = name[len(PUT_PREFIX) :]
                stage, task = enclosing(t)
                n = count[(stage, task, name)]
                count[(stage, task, name)] += 1
                first = -1 if payload is None else _int_payload(payload, name, rec, lo=-1)
                key3 = (stage + "|" + region, task, n)
                u = puts.get(key3)
                if u is None:
                    puts[key3] = PutRecord(stage, task, region, 0, first, float(t))
                else:
                    u.time = max(u.time, t)
            for key3, n_retries in wave_retries.items():
                # a CTA's retries are its slowest wave's, as its satisfaction is
                p = polls[key3]
                p.retries = max(p.retries or 0, min(n_retries, MAX_COUNT))
        track.stages = sorted(stages.values(), key=lambda s: (s.start, s.end))
        track.polls = sorted(polls.values(), key=lambda p: p.first_issue)
        track.puts = sorted(puts.values(), key=lambda u: u.time)
    meta = Meta.for_launch(
        cfg,
        source="measured",
        gpu=gpu,
        clock="s_memrealtime 100 MHz (ktrace)",
        extra={
            "format": "ktrace",
            "clock_resolution_ns": 10.0,
            "ctas_recorded": sorted(per_cta),
            "ignored": ignored,
        },
    )
    return Timeline(meta, ctas)


def _role(b: int) -> str:
    return role_of(b).value


def read_ktrace(
    path: str | Path,
    *,
    R: int,
    L: int,
    nb: int = 8,
    kda0: int = 0,
    gpu: str = "mi355x",
    launch: int = 1,
    **variants: bool,
) -> Timeline:
    """One launch (1-based, as the trace names them) of a ktrace ``.pftrace.gz``."""
    p = Path(path)
    raw = read_capped(p)
    return parse_ktrace(
        raw,
        R=R,
        L=L,
        nb=nb,
        kda0=kda0,
        gpu=gpu,
        launch=launch,
        where=str(p),
        **variants,
    )


def parse_ktrace(
    raw: bytes,
    *,
    R: int,
    L: int,
    nb: int = 8,
    kda0: int = 0,
    gpu: str = "mi355x",
    launch: int = 1,
    where: str = "ktrace",
    **variants: bool,
) -> Timeline:
    """``variants``: the protocol variants the launch ran (``gate_local=True``, ...)."""
    try:
        cfg = LaunchConfig(R, L, nb, kda0, **variants_of(variants)).validate()
    except InvalidInput as e:
        raise InvalidInput(f"the trace's configuration: {e}", what=e.what, where=where) from e
    return to_timeline(launch_waves(raw, launch, where), cfg, gpu, where)
