"""The text form of a host sequence (``kda-sim check --sequence SPEC``).

    SPEC := STEP (";" STEP)*
    STEP := ITEM ("&" ITEM)*                  "&": grids on two streams, dispatched in order
    ITEM := "launch" ["*" N] MOD*             a launch with a fresh epoch (N launches)
          | "replay" ["*" N] ["update"]       replay the last launch's graph N times
          | "zero=" REGION ("," REGION)*      the host zeroes regions, outside any graph
    MOD  := "zero=" REGION ("," REGION)*      zeroed before the launch, inside its graph
          | FIELD "=" VALUE                   a configuration field of this launch

Example: ``launch zero=SEM; replay*3`` or ``launch grid=scheduler & launch grid=worker``.
"""

from __future__ import annotations

from kda_sim.errors import InvalidInput
from kda_sim.host.steps import HostSequence, LaunchStep, Replay, Step, Together, Zero

MAX_REPEAT = 1000  # launches or replays one item may ask for


def _bad(token: str, why: str) -> InvalidInput:
    return InvalidInput(f"{token!r}: {why}", what="sequence", where="--sequence")


def _count(word: str, token: str) -> tuple[str, int]:
    name, star, n = word.partition("*")
    if not star:
        return name, 1
    if not n.isdigit() or not 1 <= int(n) <= MAX_REPEAT:
        raise _bad(token, f"the count after '*' is an integer in 1..{MAX_REPEAT}")
    return name, int(n)


def _regions(value: str, token: str) -> tuple[str, ...]:
    names = tuple(r for r in value.split(",") if r)
    if not names:
        raise _bad(token, "zero= names at least one region")
    return names


def _item(text: str) -> list[Step]:
    words = text.split()
    if not words:
        raise _bad(text, "an empty step")
    head, rest = words[0], words[1:]
    if head.startswith("zero="):
        if rest:
            raise _bad(rest[0], "a host zero takes no modifiers")
        return [Zero(_regions(head[5:], head))]
    name, n = _count(head, head)
    if name == "replay":
        update = False
        for w in rest:
            if w != "update":
                raise _bad(w, "replay takes only 'update'")
            update = True
        return [Replay(n, update)]
    if name != "launch":
        raise _bad(head, "a step is launch, replay or zero=REGIONS")
    zero: tuple[str, ...] = ()
    overrides: list[tuple[str, str]] = []
    for w in rest:
        key, eq, value = w.partition("=")
        if not eq or not key or not value:
            raise _bad(w, "a launch modifier is zero=REGIONS or FIELD=VALUE")
        if key == "zero":
            zero += _regions(value, w)
        else:
            overrides.append((key, value))
    return [LaunchStep(zero, tuple(overrides))] * n


def parse(text: str) -> HostSequence:
    """The sequence ``text`` describes; an ``InvalidInput`` naming the token otherwise."""
    steps: list[Step] = []
    for part in text.split(";"):
        items = part.split("&")
        if len(items) == 1:
            steps += _item(part)
            continue
        grids: list[LaunchStep] = []
        for it in items:
            got = _item(it)
            if len(got) != 1 or not isinstance(got[0], LaunchStep):
                raise _bad(it.strip(), "'&' joins single launches (no replay, zero or '*')")
            grids.append(got[0])
        steps.append(Together(tuple(grids)))
    if not any(isinstance(s, LaunchStep | Together) for s in steps):
        raise _bad(text, "a sequence has at least one launch")
    first = next(i for i, s in enumerate(steps) if isinstance(s, LaunchStep | Together))
    if any(isinstance(s, Replay) for s in steps[:first]):
        raise _bad("replay", "a replay needs a launch before it to capture")
    return HostSequence(tuple(steps), text)


def _launch_text(step: LaunchStep) -> str:
    words = ["launch"]
    if step.zero:
        words.append("zero=" + ",".join(step.zero))
    words += [f"{k}={v}" for k, v in step.overrides]
    return " ".join(words)


def _step_text(step: Step) -> str:
    if isinstance(step, Zero):
        return "zero=" + ",".join(step.regions)
    if isinstance(step, Replay):
        return (
            "replay"
            + (f"*{step.times}" if step.times > 1 else "")
            + (" update" if step.update else "")
        )
    if isinstance(step, Together):
        return " & ".join(_launch_text(g) for g in step.grids)
    return _launch_text(step)


def render(steps: tuple[Step, ...]) -> str:
    """``steps`` as the text :func:`parse` reads back to them (replays in a row of the same
    kind written ``replay*N``)."""
    merged: list[Step] = []
    for s in steps:
        last = merged[-1] if merged else None
        if isinstance(s, Replay) and isinstance(last, Replay) and last.update == s.update:
            merged[-1] = Replay(last.times + s.times, s.update)
        else:
            merged.append(s)
    return "; ".join(_step_text(s) for s in merged)
