"""What the Tags view shows, without Streamlit: the step model and verdict of a tag
check, each class of mailbox pairs with the launch that last wrote it, the tags each
launch slot writes, and the stale-pass scenarios as rows and as launches in a row.

A *class* is a set of pairs every launch of every shape treats alike (writes or polls all
of them or none, :class:`kda_sim.checks.tags.footprint.StepModel`); a class stands for its
pairs in every table here. The kernel's ``tag_model`` hook gives the step model and the
shipped tag (the default kernel's unless the inputs name another).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from kda_sim.checks.tags.analysis import Policy, Scenario, TagVerdict, analyse
from kda_sim.checks.tags.footprint import Layout, StepModel, tag_model
from kda_sim.checks.tags.schemes import StepTag, TagScheme, check_slot_count, make_scheme
from kda_sim.errors import InvalidInput
from kda_sim.kernels.registry import DEFAULT_KERNEL, get
from kda_sim.text import probability

MAX_SHAPE_R = 8  # the shapes offered: the safety map's grid
MAX_SHAPE_L = 4
SHAPES = tuple(f"{r}x{lng}" for r in range(1, MAX_SHAPE_R + 1) for lng in range(1, MAX_SHAPE_L + 1))


def scheme_defaults(kernel: str = DEFAULT_KERNEL) -> StepTag:
    """The kernel's shipped step tag: its slots a step, epoch bits and width are the
    inputs' defaults (one home: the kernel's ``tag_model`` hook)."""
    tm = tag_model(get(kernel))
    return StepTag(tm.tag_bits, tm.epoch_bits, tm.tag_slots)


@dataclass(frozen=True)
class TagInputs:
    shapes: tuple[str, ...]  # "RxL"
    nb: tuple[int, ...]  # a launch slot each
    policy: Policy
    scheme: str
    tag_slots: int
    epoch_bits: int
    faults: tuple[str, ...] = ()  # "frozen-epoch", "drop-slot"
    layout: Layout = Layout.FIXED
    epoch0: int | None = None  # the counter's first value (0); frozen: None is every value
    kernel: str = DEFAULT_KERNEL  # whose tag and step model
    # fields of every launch's configuration but its shape and nb (the rest: the kernel's
    # defaults); the view passes the open run's gate variant (K1's gate_local)
    config: Mapping[str, Any] = field(default_factory=dict)


def parse_nb(text: str) -> tuple[int, ...]:
    """``"1,1,2,8"`` -> the nb of each launch slot of a step."""
    try:
        out = tuple(int(x) for x in text.replace(" ", "").split(",") if x)
    except ValueError as e:
        raise InvalidInput(f"{text!r}: a comma-separated list of integers", what="nb") from e
    if not out:
        raise InvalidInput("at least one launch slot", what="nb")
    if any(x < 1 for x in out):
        raise InvalidInput(f"{text!r}: every nb is at least 1", what="nb")
    return out


def _shape(text: str) -> tuple[int, int]:
    r, lng = text.split("x")
    return int(r), int(lng)


def run_check(inp: TagInputs) -> tuple[StepModel, TagScheme, TagVerdict]:
    """The check ``kda-sim check --tags`` runs, for the view's inputs."""
    if not inp.shapes:
        raise InvalidInput("pick at least one step shape", what="shapes")
    spec = get(inp.kernel)
    tm = tag_model(spec)
    bits = tm.tag_bits
    if not 1 <= inp.epoch_bits < bits:
        raise InvalidInput(f"epoch bits {inp.epoch_bits}: must be in 1..{bits - 1}", what="epoch")
    if inp.tag_slots < 1:
        raise InvalidInput("tag slots must be at least 1", what="tag slots")
    scheme = make_scheme(
        inp.scheme,
        tag_slots=inp.tag_slots,
        epoch_bits=inp.epoch_bits,
        bits=bits,
        drop_slot="drop-slot" in inp.faults,
        frozen="frozen-epoch" in inp.faults,
        captured=inp.epoch0,
    )
    check_slot_count(len(inp.nb), scheme, given=f"nb {','.join(map(str, inp.nb))}")
    shapes = tuple(_shape(s) for s in inp.shapes)
    cfg = spec.config_from_dict({**spec.config_to_dict(spec.default_config()), **inp.config})
    model = tm.step_model(shapes, inp.nb, inp.layout, cfg)
    epoch0 = 0 if inp.epoch0 is None else inp.epoch0
    return model, scheme, analyse(model, scheme, inp.policy, epoch0=epoch0)


def _last_writer(model: StepModel, a: int, c: int) -> int:
    """The last slot of a step of shape ``a`` that writes class ``c`` (-1: none)."""
    w = np.flatnonzero(model.writes[a, :, c])
    return int(w[-1]) if w.size else -1


def _first_reads(model: StepModel, a: int, c: int, policy: Policy) -> str:
    """What each poll of class ``c`` in a step of shape ``a`` finds there before its own
    launch's producers write it: an earlier slot's pair, the previous step's, or 0."""
    out = []
    for s in np.flatnonzero(model.polls[a, :, c]).tolist():
        earlier = np.flatnonzero(model.writes[a, :s, c])
        if earlier.size:
            out.append(f"slot {s} sees slot {int(earlier[-1])}'s pair of this step")
        elif policy is Policy.ZEROED:
            out.append(f"slot {s} sees 0 (zeroed before the step)")
        else:
            writers = [
                f"slot {w} of a {model.shapes[b]} step"
                for b in range(len(model.shapes))
                if (w := _last_writer(model, b, c)) >= 0
            ]
            out.append(
                f"slot {s} sees the previous step's ({' or '.join(writers)})"
                if writers
                else f"slot {s} sees 0 (no launch writes it)"
            )
    return "; ".join(out)


def pair_classes(model: StepModel, policy: Policy) -> pd.DataFrame:
    """A row a class of pairs: where it is, how many pairs, which slot of each step shape
    writes it last and which slots poll it, and what a step's first poll of it finds."""
    rows = []
    k = len(model.shapes)
    for c in range(model.classes):
        where = next(
            (
                (a, s)
                for a in range(k)
                for s in range(model.slots)
                if model.writes[a, s, c] or model.polls[a, s, c]
            ),
            (0, 0),
        )
        pair = model.pair(c, *where)
        row: dict[str, object] = {
            "region": pair.split("[")[0],
            "first pair": pair,
            "pairs": int(model.sizes[c]),
        }
        for a, shape in enumerate(model.shapes):
            w = _last_writer(model, a, c)
            row[f"{shape}: last written by"] = "—" if w < 0 else f"slot {w}"
            polled = np.flatnonzero(model.polls[a, :, c]).tolist()
            row[f"{shape}: polled by"] = ", ".join(f"slot {s}" for s in polled) or "—"
        row["before its own launch writes it, a poll finds"] = " | ".join(
            f"{model.shapes[a]}: {t}" for a in range(k) if (t := _first_reads(model, a, c, policy))
        )
        rows.append(row)
    order = ["region", "first pair"]
    return pd.DataFrame(rows).sort_values(order, kind="stable").reset_index(drop=True)


def slot_tags(model: StepModel, scheme: TagScheme, epoch0: int, steps: int = 3) -> pd.DataFrame:
    """The tag each launch slot writes (and polls for) at the first epochs."""
    rows = []
    e = epoch0
    for _ in range(steps):
        for s in range(model.slots):
            rows.append({"epoch": e, "slot": s, "nb": model.nb[s], "tag": scheme.tag(e, s)})
        e = scheme.next_epoch(e)
    return pd.DataFrame(rows)


def scenario_table(v: TagVerdict, bits: int) -> pd.DataFrame:
    rows = []
    for sc in v.scenarios:
        rows.append(
            {
                "kind": sc.kind.value,
                "pair": sc.pair,
                "reader": f"slot {sc.reader_slot} of {sc.reader_shape} at epoch {sc.reader_epoch}",
                "writer": "the cleared value 0"
                if sc.writer_slot is None
                else f"slot {sc.writer_slot} of {sc.writer_shape} at epoch {sc.writer_epoch}",
                "steps apart": sc.gap,
                "tag": sc.tag,
                "epochs that collide": f"{sc.epoch_fraction:.3g}",
                "a step reads this way": probability(sc.log10_per_step),
            }
        )
    return pd.DataFrame(rows)


def scenario_figure(sc: Scenario, nb: Sequence[int], slots: int) -> go.Figure:
    """The scenario as launches in a row: the writer's step, the steps between, the
    reader's step, each launch a box (the two that meet in red)."""
    boxes: list[tuple[str, str, bool]] = []  # label, hover, highlighted

    def step(shape: str, epoch: int | None, mark: int | None, what: str) -> None:
        for s in range(slots):
            hit = s == mark
            boxes.append(
                (
                    f"{shape} e={epoch}<br>slot {s}"
                    + (f"<br><b>{what.split()[0]}</b>" if hit else ""),
                    f"{shape} step at epoch {epoch}, slot {s} (nb {nb[s]})"
                    + (f": {what}" if hit else ""),
                    hit,
                )
            )

    if sc.writer_slot is not None and sc.gap > 0:
        step(sc.writer_shape or "", sc.writer_epoch, sc.writer_slot, f"writes {sc.pair}")
        if sc.gap >= 2:
            boxes.append(
                (
                    f"… {sc.gap - 1} steps<br>of {sc.between_shape}",
                    f"{sc.gap - 1} steps of shape {sc.between_shape}: none writes {sc.pair}",
                    False,
                )
            )
        step(sc.reader_shape, sc.reader_epoch, sc.reader_slot, f"polls {sc.pair}")
    else:
        boxes_step: dict[int, str] = {sc.reader_slot: f"polls {sc.pair}, tag {sc.tag}"}
        if sc.writer_slot is not None:
            boxes_step[sc.writer_slot] = f"writes {sc.pair} with tag {sc.tag}"
        for s in range(slots):
            what = boxes_step.get(s)
            boxes.append(
                (
                    f"{sc.reader_shape} e={sc.reader_epoch}<br>slot {s}"
                    + (f"<br><b>{what.split()[0]}</b>" if what else ""),
                    f"slot {s} (nb {nb[s]})" + (f": {what}" if what else ""),
                    what is not None,
                )
            )
    fig = go.Figure()
    for i, (_, _, hit) in enumerate(boxes):
        fig.add_shape(
            type="rect",
            x0=i + 0.05,
            x1=i + 0.95,
            y0=0,
            y1=1,
            fillcolor="#f4c7c3" if hit else "#eeeeee",
            line={"color": "#d62728" if hit else "#999", "width": 2 if hit else 1},
            layer="below",  # under the labels
        )
    fig.add_trace(
        go.Scatter(
            x=[i + 0.5 for i in range(len(boxes))],
            y=[0.5] * len(boxes),
            mode="text",
            text=[b[0] for b in boxes],
            hovertext=[b[1] for b in boxes],
            hovertemplate="%{hovertext}<extra></extra>",
            textfont={"size": 11},
            showlegend=False,
        )
    )
    fig.update_xaxes(visible=False, range=[0, max(len(boxes), 1)])
    fig.update_yaxes(visible=False, range=[-0.1, 1.1])
    fig.update_layout(
        height=150,
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
        title={
            "text": (
                f"{sc.pair} holds the cleared 0, and a launch whose tag is {sc.tag} polls it"
                if sc.writer_slot is None
                else f"{sc.pair} written with tag {sc.tag}, then polled by a launch whose "
                f"own tag is {sc.tag}"
            ),
            "x": 0.0,
            "font": {"size": 13},
        },
        plot_bgcolor="white",
    )
    return fig
