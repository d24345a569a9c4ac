"""Bug corpus: the real bugs of kda_sim/kernels/bugs/ (docs/bugs.md), and for the one
picked its description, what ``kda-sim check`` finds for the bug and for its fix, and the
counterexample drawn: the launch that hangs, or the replay that passes on an old value,
beside the fix's."""

from __future__ import annotations

import importlib

import pandas as pd
import streamlit as st

from kda_sim.app.bug_checks import BugRun, Shown, case_of, run_cached
from kda_sim.app.bug_figures import counterexample_figure
from kda_sim.app.views.common import chain_lines, fresh, show_chart
from kda_sim.checks.findings import Finding
from kda_sim.host.shortest import Shortest
from kda_sim.kernels.bugs.case import BugCase
from kda_sim.kernels.bugs.corpus import cases
from kda_sim.timeline.critical import shortest_chain

PICK = "bug_pick"
LAUNCH = "bug_launch"
BUGS_PACKAGE = "kda_sim.kernels.bugs"


def corpus_table(corpus: list[BugCase]) -> pd.DataFrame:
    """One row a bug, as docs/bugs.md lists them (its first thread linked)."""
    return pd.DataFrame(
        [
            {
                "bug": c.kernel,
                "project": c.project,
                "thread": c.threads[0],
                "more threads": len(c.threads) - 1,
                "GPU": c.gpu,
                "category": c.category,
                "culprit": c.culprit,
                "fix by": "host sequence" if c.fix_sequence else "kernel flag",
            }
            for c in corpus
        ]
    )


def description(kernel: str) -> str:
    """The bug module's docstring as markdown (reST's double backquotes made single)."""
    doc = (importlib.import_module(f"{BUGS_PACKAGE}.{kernel}").__doc__ or "").strip()
    title, _, rest = doc.replace("``", "`").partition("\n")
    return f"**{title}**\n{rest}"


def _names_culprit(f: Finding, case: BugCase) -> bool:
    return f.category.value == case.category and case.culprit in f.message


def _finding_md(f: Finding, with_shortest: bool = False) -> str:
    """A finding as markdown; ``with_shortest``: the shortest failing host sequence under
    it, where the check searched one (a sequence's first failing finding)."""
    fix = f"\n\n**fix:** {f.fix}" if f.fix else ""
    least = f.details.get("shortest") if with_shortest else None
    short = f"\n\n**shortest:** {Shortest(**least).line()}" if least else ""
    return f"**[{f.category.value}]** {f.message}{fix}{short}"


def _bug_side(case: BugCase, run: BugRun) -> None:
    st.markdown(f"**The bug** · `{run.command}`")
    st.caption(_profile_said(run))
    if run.ok:  # the corpus test says this never happens; the page says so if it does
        st.warning("The check passes: the bug is not found.")
    named = [f for f in run.failing if _names_culprit(f, case)]
    others = [f for f in run.failing if not _names_culprit(f, case)]
    for f in named[:1]:
        st.error(_finding_md(f, with_shortest=True))
    more = named[1:] + others
    if more:
        with st.expander(f"{len(more)} more failing findings"):
            for f in more:
                st.markdown(_finding_md(f))
    with st.expander("The check's report"):
        st.code(run.report, language=None)


def _profile_said(run: BugRun) -> str:
    return f"Checked on profile {run.profile}: {run.costs or 'no kernel costs recorded'}."


def _fix_side(run: BugRun) -> None:
    st.markdown(f"**The fix** · `{run.command}`")
    st.caption(_profile_said(run))
    if run.ok:
        st.success("PASS: the check finds nothing")
    else:
        for f in run.failing:
            st.error(_finding_md(f))
    with st.expander("The check's report"):
        st.code(run.report, language=None)


def _launch_pick(bug: BugRun) -> int:
    """Which launch of a host sequence to draw (the first bad one unless picked)."""
    labels = [s.label for s in bug.launches]
    if len(labels) == 1:
        return 0
    fresh(LAUNCH, labels, labels[bug.shown])
    picked = st.radio("Launch of the sequence", labels, key=LAUNCH, horizontal=True)
    return labels.index(picked)


def _caption(shown: Shown) -> str:
    tl = shown.timeline
    if shown.hangs:
        never = sum(1 for c in tl.ctas if c.start is None)
        tail = f", {never} never resident" if never else ""
        return f"{shown.label}: hangs, {len(tl.stuck)} of {len(tl.ctas)} CTAs stuck{tail}"
    if shown.stale:
        return f"{shown.label}: finishes, {len(shown.stale)} waits passed on an old value"
    return f"{shown.label}: finishes"


def _rows_note(shown: Shown) -> str:
    """Where each grid's CTAs are among the rows (the engine numbers grids run together
    one after the other; the findings number each grid's own)."""
    parts = [f"grid {i} is CTAs {a}-{a + n - 1}" for i, (a, n) in enumerate(shown.grids)]
    return f"Rows: {', '.join(parts)}." if parts else ""


def _draw(shown: Shown, side: str, key: str) -> None:
    chain = tuple(shortest_chain(shown.timeline)) if shown.hangs else ()
    # above the chart, not its title: a legend of many entries wraps over a title
    st.markdown(f"**{side}** · {_caption(shown)}")
    if shown.grids:
        st.caption(_rows_note(shown))
    show_chart(counterexample_figure(shown, "", chain), key)
    if chain:
        st.markdown("Wait-for chain:\n" + chain_lines(shown.timeline, list(chain)))
    for s in shown.stale[:4]:
        st.markdown(
            f"- **CTA {s.cta}** {s.what}: passes at {s.at_ns / 1e3:.2f} us on what {s.left_by} left"
        )
    if len(shown.stale) > 4:
        st.caption(f"and {len(shown.stale) - 4} more stale passes (crosses on the chart)")


def _counterexample(bug: BugRun, fix: BugRun) -> None:
    st.subheader("The counterexample")
    i = _launch_pick(bug)
    a, b = st.columns(2)
    with a:
        _draw(bug.launches[i], "bug", "bug_tl")
    with b:
        # the fix's launch at the same place in its sequence (a fix never runs fewer)
        _draw(fix.launches[min(i, len(fix.launches) - 1)], "fix", "fix_tl")


def render() -> None:
    """The view; it needs no open run (the sidebar's run is not used)."""
    corpus = cases()
    st.subheader("Bug corpus")
    st.caption(
        f"{len(corpus)} synchronization bugs from {len({c.project for c in corpus})} public "
        "projects, each a kernel in kda_sim/kernels/bugs/ (docs/bugs.md). Pick one: the "
        "check runs on it and on its fix, as `kda-sim check` does."
    )
    st.dataframe(
        corpus_table(corpus),
        hide_index=True,
        column_config={"thread": st.column_config.LinkColumn("thread")},
    )
    names = [c.kernel for c in corpus]
    kernel = st.selectbox(
        "Bug",
        names,
        key=PICK,
        format_func=lambda k: f"{k} ({case_of(k).project})",
    )
    case = case_of(kernel)
    st.markdown(description(kernel))
    with st.spinner(f"Checking {kernel} and its fix…"):
        bug, fix = run_cached(kernel, False), run_cached(kernel, True)
    a, b = st.columns(2)
    with a:
        _bug_side(case, bug)
    with b:
        _fix_side(fix)
    _counterexample(bug, fix)
