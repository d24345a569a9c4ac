"""Every view of the app driven through streamlit.testing, asserting on what the page shows."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pytest
from apphelp import figure_of, goto, no_failure, stage_tables, texts
from streamlit.testing.v1 import AppTest

from kda_sim.app.views import safety
from kda_sim.app.views.timeline import INTERACTIVE, PICTURE_CAPTION, TABLES_LABEL


def test_opens_on_a_simulation_and_says_so(empty_traces: Path, make_app) -> None:
    at = make_app()
    assert "simulated h200 R=2 L=2" in texts(at.markdown)
    assert "holds no real trace" in texts(at.caption)
    labels = {m.label: m.value for m in at.metric}
    assert labels["CTAs finished"] == "256 / 256"
    assert labels["Simulated makespan"].endswith(" us")
    fig = figure_of(at)
    names = [d["name"] for d in fig["data"]]
    for stage in ("slice", "load_x", "gemv1", "k.recur", "poll wait", "critical path"):
        assert stage in names
    assert fig["layout"]["xaxis"]["title"]["text"] == "time (us)"
    hover = "".join(fig["data"][names.index("k.conv")]["hovertext"])
    # the hover names stage, task, cells, retries and producer
    for word in ("k.conv", "task", "PROJ[", "retries", "released by CTA"):
        assert word in hover
    assert not at.dataframe, "the stage tables are drawn when their expander is opened"
    assert [e.label for e in at.expander] == [TABLES_LABEL]
    table = stage_tables(at).dataframe[0].value
    assert {"slice", "k.norm"} <= set(table["stage"])


def test_filters_narrow_the_rows(empty_traces: Path, make_app) -> None:
    at = make_app()
    at.multiselect(key="tl_roles").set_value(["attn"]).run()
    fig = figure_of(at)
    assert fig["layout"]["yaxis"]["ticktext"][0] == "CTA 0"
    assert all(int(t.split()[1]) < 56 for t in fig["layout"]["yaxis"]["ticktext"])
    at.multiselect(key="tl_roles").set_value(["gemv", "attn"]).run()
    at.slider(key="tl_ctas").set_value((100, 120)).run()
    fig = figure_of(at)
    ticks = [int(t.split()[1]) for t in fig["layout"]["yaxis"]["ticktext"]]
    assert min(ticks) == 100 and max(ticks) <= 120
    at.multiselect(key="tl_stages").set_value(["gemv0"]).run()
    names = [d["name"] for d in figure_of(at)["data"]]
    assert "gemv0" in names and "gemv1" not in names and "k.conv" not in names


def test_opens_on_the_bundled_trace_overlaid(one_trace: Path, make_app) -> None:
    at = make_app()
    assert "trace h200_R2_L2.json" in texts(at.markdown)
    assert "real run (test clock ns) overlaid on its simulation" in texts(at.caption)
    labels = {m.label for m in at.metric}
    assert {"Real makespan", "Simulated makespan"} <= labels
    fig = figure_of(at)
    data = {d["name"]: d for d in fig["data"]}
    assert "k.conv (real)" in data and "k.conv (simulated)" in data
    # a row a CTA in two lanes: the real run thick above, the simulation thin and dark
    real, sim = data["k.conv (real)"], data["k.conv (simulated)"]
    assert real["width"] > 2 * sim["width"]
    assert sim["marker"]["color"] != real["marker"]["color"]
    assert "the simulation thin and dark below" in fig["layout"]["title"]["text"]
    at.radio(key="tl_layout").set_value("side by side").run()
    fig = figure_of(at)
    assert "xaxis2" in fig["layout"]
    assert any(d.get("xaxis") == "x2" for d in fig["data"])
    assert "sim error %" in stage_tables(at).dataframe[0].value.columns


def _opened_alone(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make_app) -> AppTest:
    """The app on a traces folder holding the bundled trace ``name`` alone, opened on it."""
    import shutil

    d = tmp_path / "traces"
    d.mkdir()
    shutil.copy(Path(__file__).resolve().parents[2] / "traces" / name, d)
    monkeypatch.setenv("KDA_SIM_TRACES", str(d))
    at = make_app()
    assert f"trace {name}" in texts(at.markdown)
    return at


def test_opens_a_bundled_grid_barrier_trace_on_its_h100_simulation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make_app
) -> None:
    """Another kernel's real trace (the grid barrier on an H100) opens as K1's do: overlaid
    on the simulation of its own kernel and configuration on its GPU's profile."""
    name = "gridbarrier_h100_ctas8_rounds2.json.gz"
    at = _opened_alone(name, tmp_path, monkeypatch, make_app)
    captions = texts(at.caption)
    assert "overlaid on its simulation" in captions
    assert "Simulated on profile h100: gridbarrier" in captions
    labels = {m.label for m in at.metric}
    assert {"Real makespan", "Simulated makespan"} <= labels
    at.toggle(key=INTERACTIVE).set_value(True).run()
    names = {d["name"] for d in figure_of(at)["data"]}
    assert {"work (real)", "work (simulated)", "barrier (real)", "barrier (simulated)"} <= names


def test_opens_a_bundled_k1_h100_trace_on_the_h100_fit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make_app
) -> None:
    """K1's real H100 launch opens on the simulation its meta names: the costs fitted on
    the H100's traces (``h100-k1``), not the H200's."""
    at = _opened_alone("k1_h100_R1_L1.json.gz", tmp_path, monkeypatch, make_app)
    said = "Simulated on profile h100-k1: k1 costs fitted on h100 by kda-sim calibrate ("
    assert said in texts(at.caption)
    assert {"Real makespan", "Simulated makespan"} <= {m.label for m in at.metric}


def _picture_url(at: AppTest) -> str:
    (image,) = at.get("image")
    (img,) = image.proto.imgs
    return img.url


def test_the_timeline_opens_on_a_picture_of_its_chart(one_trace: Path, make_app) -> None:
    at = make_app()
    assert not at.get("plotly_chart"), "the interactive chart is a toggle away"
    url = _picture_url(at)
    png = base64.b64decode(url.removeprefix("data:image/png;base64,"))
    assert url.startswith("data:image/png;base64,") and png.startswith(b"\x89PNG")
    assert PICTURE_CAPTION in texts(at.caption)
    at.toggle(key=INTERACTIVE).set_value(True).run()
    assert not at.get("image") and figure_of(at)["data"]
    # the choice stays while the user changes what is drawn
    at.toggle(key="tl_polls").set_value(False).run()
    names = [d["name"] for d in figure_of(at)["data"]]
    assert not at.get("image") and "poll wait (real)" not in names
    at.toggle(key=INTERACTIVE).set_value(False).run()
    assert not at.get("plotly_chart") and _picture_url(at) != url  # drawn without the waits


def test_a_bundled_traces_picture_is_kept_for_a_restarted_server(
    one_trace: Path, make_app, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kda_sim.app import data, figure_image, run_store
    from kda_sim.app.views import common

    def restart() -> None:  # what a restarted server forgets: its memory caches
        for cached in (common._picture, common._figure, data._bundled_run):
            cached.clear()

    monkeypatch.setenv("KDA_SIM_CACHE", str(tmp_path / "cache"))
    restart()
    url = _picture_url(make_app())
    assert list((tmp_path / "cache" / run_store.PICTURES).glob("*.png"))

    def not_drawn(*args: object) -> bytes:
        raise AssertionError("the picture was drawn again")

    restart()
    monkeypatch.setattr(figure_image, "png_of", not_drawn)
    assert _picture_url(make_app()) == url
    restart()


def test_a_simulated_runs_picture_stays_in_memory(
    empty_traces: Path, make_app, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kda_sim.app import run_store
    from kda_sim.app.views import common

    # a run named by its name, not its content: not kept across servers
    monkeypatch.setenv("KDA_SIM_CACHE", str(tmp_path / "cache"))
    common._picture.clear()
    assert _picture_url(make_app())
    assert not list((tmp_path / "cache").glob(f"{run_store.PICTURES}/*"))


def test_follow_a_handoff(empty_traces: Path, make_app) -> None:
    at = goto(make_app(), "Follow a hand-off")
    fig = figure_of(at)
    arrows = [a for a in fig["layout"].get("annotations", []) if a.get("showarrow")]
    sources = at.dataframe[0].value
    assert len(arrows) == len(sources) > 0
    assert sources["released it"].sum() == 1
    assert "Critical path" in texts(at.subheader)
    assert "picked poll" in [d["name"] for d in fig["data"]]
    # the chart opens on the hand-off's window, not the whole launch
    picked = next(d for d in fig["data"] if d["name"] == "picked poll")
    x0, x1 = fig["layout"]["xaxis"]["range"]
    assert x0 <= min(sources["put at us"]) and x1 >= max(picked["x"])
    assert x1 - x0 < 0.8 * max(sources["put at us"].max(), 1.0) + 10
    # attn CTA 2 gates token 2 (S = 4): its first poll reads PART from all 56 slices
    at.number_input(key=next(k for k in _keys(at) if k.startswith("ho_cta_"))).set_value(2).run()
    sel = at.selectbox(key=next(k for k in _keys(at) if k.startswith("ho_poll_")))
    sel.set_value(0).run()
    assert len(at.dataframe[0].value) == 56
    assert "poll PART" in sel.format_func(0)
    # CTA 5 does not gate: its first poll is WGT, put by the 4 gating CTAs
    at.number_input(key=next(k for k in _keys(at) if k.startswith("ho_cta_"))).set_value(5).run()
    at.selectbox(key=next(k for k in _keys(at) if k.endswith("_5"))).set_value(0).run()
    assert sorted(at.dataframe[0].value["producer CTA"]) == [0, 1, 2, 3]


def _keys(at) -> list[str]:
    return [w.key for w in at.number_input] + [w.key for w in at.selectbox]


def test_compare_with_a_real_trace(one_trace: Path, make_app) -> None:
    at = goto(make_app(), "Compare")
    heads = texts(at.subheader)
    for h in ("Per-stage error", "Poll wait, CTA x stage", "Clock offsets", "Conformance findings"):
        assert h in heads
    # kda_sim.compare: its per-stage errors, clock fit and conformance
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Makespan error (sim - real)"].endswith("%")
    table = at.dataframe[0].value
    assert "duration error median (us)" in table.columns and "k.conv" in set(table["stage"])
    assert "conforms to the model" in texts(at.success)
    assert any(json.loads(c.proto.spec)["data"][0]["type"] == "bar" for c in at.get("plotly_chart"))
    # the stage means of both runs are there either way
    assert any("sim error %" in d.value.columns for d in at.dataframe)
    heat = next(
        json.loads(c.proto.spec)
        for c in at.get("plotly_chart")
        if json.loads(c.proto.spec)["data"][0]["type"] == "heatmap"
    )
    assert "k.conv" in heat["data"][0]["x"]
    at.radio(key="cmp_heat").set_value("real - simulated").run()
    titles = [json.loads(c.proto.spec)["layout"]["title"]["text"] for c in at.get("plotly_chart")]
    assert any("real - simulated" in t for t in titles)


def _broken_compare(*args: object) -> None:
    raise ValueError("no stage matched")


def _broken_conformance(*args: object) -> None:
    raise ValueError("no clock")


def test_compare_says_what_failed(
    one_trace: Path, make_app, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kda_sim.app.views import compare

    monkeypatch.setattr(compare, "compare", _broken_compare)
    monkeypatch.setattr(compare, "conformance", _broken_conformance)
    at = goto(make_app(), "Compare")
    warned = texts(at.warning)
    assert "_broken_compare failed: ValueError: no stage matched" in warned
    assert "_broken_conformance failed: ValueError: no clock" in warned
    assert "sim error %" in at.dataframe[0].value.columns


def test_compare_without_a_real_trace_says_what_it_needs(empty_traces: Path, make_app) -> None:
    at = goto(make_app(), "Compare")
    assert "needs a real trace" in texts(at.info)
    assert figure_of(at)["data"][0]["type"] == "heatmap"


def test_whatif_deadlock_shows_the_wait_for_chain(empty_traces: Path, make_app) -> None:
    at = goto(make_app(), "What-if")
    assert "Finishes in" in texts(at.success)
    # the seed's build: one CTA an SM at 4x2 (the H200 as we ship K1 runs two and finishes)
    at.selectbox(key="wi_gpu").set_value("h200-stock").run()
    at.number_input(key="wi|k1|R").set_value(4).run()
    assert not at.exception
    err = texts(at.error)
    assert "DEADLOCK on h200-stock" in err and "never became resident" in err
    assert "Wait-for chain" in texts(at.subheader)
    chain = texts(at.markdown)
    assert "is not resident" in chain and "132 slots" in chain
    labels = [b.label for b in at.get("download_button")]
    assert "Perfetto JSON of this what-if" in labels
    fig = figure_of(at)
    names = [d["name"] for d in fig["data"]]
    for name in ("stuck (waits)", "never resident (no free slot)", "wait-for chain"):
        assert name in names
    chain = next(d for d in fig["data"] if d["name"] == "wait-for chain")
    assert "waits for CTA" in chain["hovertext"][0]
    at.button(key="wi_check_go").click().run()
    assert not at.exception
    assert "deadlock" in texts(at.error).lower()
    assert "CTA 0 waits in k.conv" in texts(at.error)


def test_whatif_refuses_an_occupancy_the_build_cannot_hold(empty_traces: Path, make_app) -> None:
    at = goto(make_app(), "What-if")
    at.selectbox(key="wi_gpu").set_value("h200-stock").run()
    at.number_input(key="wi|k1|R").set_value(7).run()
    at.number_input(key="wi_occ").set_value(2).run()
    assert not at.exception
    err = texts(at.error)
    assert "Not simulated: --occupancy 2" in err and "LDS allow 1 CTA(s) a SM" in err
    assert "Finishes in" not in texts(at.success)
    at.number_input(key="wi_occ").set_value(1).run()  # what the build holds: simulated
    assert "Not simulated" not in texts(at.error)


def test_whatif_invalid_and_latency(empty_traces: Path, make_app) -> None:
    at = goto(make_app(), "What-if")
    at.number_input(key="wi|k1|R").set_value(8).run()
    at.number_input(key="wi|k1|L").set_value(4).run()
    assert "Invalid configuration" in texts(at.warning)
    at.number_input(key="wi|k1|R").set_value(2).run()
    at.number_input(key="wi|k1|L").set_value(2).run()
    base = texts(at.success)
    at.number_input(key="wi_lat_h200_poll").set_value(2000.0).run()
    slower = texts(at.success)
    assert "Finishes in" in slower and slower != base
    assert "+" in slower.split("(")[1]  # slower than the open run's simulation


def test_whatif_nw_first_moves_in_nw_and_says_what_it_saves(empty_traces: Path, make_app) -> None:
    at = goto(make_app(), "What-if")
    at.selectbox(key="wi_gpu").set_value("mi355x").run()
    base = texts(at.success)
    assert not at.checkbox(key="wi|k1|nw_first").value  # the open run: the seed's order
    at.checkbox(key="wi|k1|nw_first").check().run()
    assert not at.exception
    first = texts(at.success)
    assert "Finishes in" in first and first != base
    ms = [float(t.split("Finishes in ")[1].split(" us")[0]) for t in (base, first)]
    assert ms[1] < ms[0]
    assert "nw_first" in figure_of(at)["layout"]["title"]["text"]


def test_whatif_shows_k1s_form_and_another_kernels_fields_by_type(
    empty_traces: Path, make_app
) -> None:
    from kda_sim.app.views.whatif import form_of
    from kda_sim.kernels.registry import get

    at = goto(make_app(), "What-if")
    gate = at.radio(key="wi|k1|gate_local")
    assert gate.label == "Gate variant" and list(gate.options) == ["gate stage", "gate_local"]
    assert at.number_input(key="wi|k1|R").label == "R (requests)"
    gate.set_value("gate_local").run()
    no_failure(at)
    assert "gate_local" in figure_of(at)["layout"]["title"]["text"]
    labels = [b.label for b in at.get("download_button")]
    assert "PNG of this what-if" in labels
    # a kernel without a form: every field by its name, every on/off field combined
    tq = get("ticketqueue")
    form = form_of(tq, tq.default_config())
    fields = tq.config_to_dict(tq.default_config())
    assert [f.name for f in form.fields] == list(fields)
    assert form.switches == tuple(k for k, v in fields.items() if isinstance(v, bool))
    assert form.switches_column == "on" and form.none_on == "none"


def test_whatif_lists_every_protocol_variant_at_the_shape(empty_traces: Path, make_app) -> None:
    at = goto(make_app(), "What-if")
    at.selectbox(key="wi_gpu").set_value("mi355x").run()
    assert not at.checkbox(key="wi_switches").value  # eight simulations: on request
    at.checkbox(key="wi_switches").check().run()
    assert not at.exception
    table = next(d.value for d in at.dataframe if "variants" in d.value.columns)
    by = dict(zip(table["variants"], table["vs this what-if (us)"], strict=True))
    assert len(by) == 8 and {"gate_local", "nw_first", "onw_first"} <= set(by)
    assert "gate_local, nw_first, onw_first" in by
    assert by["none (the seed's protocol)"] == 0.0  # the open run is the seed's protocol
    assert by["nw_first"] < 0  # in_nw's round trip off the path into XRDY
    assert by["onw_first"] < 0 and by["nw_first, onw_first"] < by["nw_first"]
    assert set(table["verdict"]) == {"finishes"}


def test_whatif_floor_takes_the_costs_away_a_step_at_a_time(empty_traces: Path, make_app) -> None:
    at = goto(make_app(), "What-if")
    at.selectbox(key="wi_gpu").set_value("h200-k1").run()
    assert not at.checkbox(key="wi_floor").value  # six simulations: on request
    at.checkbox(key="wi_floor").check().run()
    assert not at.exception
    table = next(d.value for d in at.dataframe if "x the HBM bound" in d.value.columns)
    spans = list(table["makespan (us)"])
    assert len(spans) == 6 and spans == sorted(spans, reverse=True)
    assert table["each step on the one before"].iloc[0] == "the profile (h200-k1)"
    slow = spans[-1]
    # a slower measured read than the profile's own: the floor rises
    at.number_input(key="wi_fl_bw_h200-k1").set_value(2000.0).run()
    assert not at.exception
    table = next(d.value for d in at.dataframe if "x the HBM bound" in d.value.columns)
    assert table["makespan (us)"].iloc[-1] > slow + 5


def test_safety_map(empty_traces: Path, make_app, monkeypatch: pytest.MonkeyPatch) -> None:
    # a corner of the grid with all three verdicts keeps the test short
    monkeypatch.setattr(safety, "RS", (3, 4))
    monkeypatch.setattr(safety, "LS", (1, 2, 4))
    at = goto(make_app(), "Safety map")
    # the seed's build, whose residency changes with the shape: all three verdicts
    at.selectbox(key="sm_gpu").set_value("h200-stock").run()
    assert "Press the button" in texts(at.info)
    at.button(key="sm_go").click().run()
    assert not at.exception
    table = at.dataframe[0].value.set_index(["R", "L"])
    assert table.loc[(3, 1), "verdict"] == "finishes"
    assert table.loc[(3, 1), "predicted us"] > 0
    assert table.loc[(4, 2), "verdict"] == "deadlocks"
    assert table.loc[(4, 4), "verdict"] == "invalid"
    assert "LDS" in table.loc[(4, 4), "why"]
    heat = figure_of(at)["data"][0]
    assert heat["type"] == "heatmap" and heat["x"] == ["R=3", "R=4"]


def test_bad_uploads_get_a_clear_message(
    empty_traces: Path, make_app, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    at = goto(make_app(), "Bring a trace")
    cases = [
        ("broken.json", b'{"traceEvents": [', "not JSON"),
        ("other.json", b'{"traceEvents": []}', "not a kda-sim timeline"),
        ("empty.json", b"", "empty"),
        ("notes.txt", b"hello", "unknown file type"),
        ("zip.json", b"\x1f\x8b\x08garbage", "gzip"),
    ]
    for name, data, words in cases:
        at.file_uploader(key="upload_file").set_value((name, data, "application/octet-stream"))
        at.run()
        assert not at.exception, name
        msg = texts(at.error)
        assert f"Could not load {name}" in msg and words in msg, (name, msg)
    # nothing was written where the app runs (uploads stay in memory)
    assert [p.name for p in tmp_path.rglob("*")] == ["no-traces"]


def test_good_upload_becomes_the_open_run(
    empty_traces: Path, make_app, measured_bytes: bytes, tmp_path: Path
) -> None:
    before = sorted(p.name for p in tmp_path.rglob("*"))
    at = goto(make_app(), "Bring a trace")
    at.file_uploader(key="upload_file").set_value(("run.json", measured_bytes, "application/json"))
    at.run()
    assert "Loaded run.json: measured h200 R=2 L=2" in texts(at.success)
    assert at.sidebar.selectbox(key="run_choice").value == "uploaded run.json"
    goto(at, "Timeline")
    assert {"Real makespan", "Simulated makespan"} <= {m.label for m in at.metric}
    # a second upload of the same name is kept apart, not written over the first
    goto(at, "Bring a trace")
    at.file_uploader(key="upload_file").set_value(("run.json", measured_bytes, "application/json"))
    at.run()
    assert "uploaded run.json (2)" in at.sidebar.selectbox(key="run_choice").options
    assert sorted(p.name for p in tmp_path.rglob("*")) == before


def test_take_it_away(empty_traces: Path, make_app) -> None:
    at = goto(make_app(), "Take it away")
    labels = [b.label for b in at.get("download_button")]
    assert labels == ["PNG of the simulated run", "Perfetto JSON of the simulated run"]


FIXTURES = Path(__file__).resolve().parents[1] / "importers" / "fixtures"


def test_upload_a_stamp_tensor_with_its_shape(empty_traces: Path, make_app) -> None:
    from apphelp import measured_like, stamps_of

    blob = stamps_of(measured_like("mi355x", 2, 2))
    at = goto(make_app(), "Bring a trace")
    at.selectbox(key="up_gpu").set_value("mi355x").run()
    at.file_uploader(key="upload_file").set_value(("stamps.npy", blob, "application/x-npy"))
    at.run()
    assert "Loaded stamps.npy: measured mi355x R=2 L=2, 256 CTAs" in texts(at.success)
    goto(at, "Timeline")
    assert {"Real makespan", "Simulated makespan"} <= {m.label for m in at.metric}
    names = [d["name"] for d in figure_of(at)["data"]]
    assert "k.conv (real)" in names
    # stamps record no polls: the hand-off view says so instead of failing
    goto(at, "Follow a hand-off")
    assert "polls nothing" in texts(at.info) or at.dataframe


@pytest.mark.skipif(
    not (FIXTURES / "kda_pre_R1_L1_ktrace.pftrace.gz").exists(),
    reason="needs the ktrace fixture",
)
def test_upload_a_flydsl_ktrace(empty_traces: Path, make_app) -> None:
    blob = (FIXTURES / "kda_pre_R1_L1_ktrace.pftrace.gz").read_bytes()
    at = goto(make_app(), "Bring a trace")
    at.number_input(key="up_R").set_value(1)
    at.number_input(key="up_L").set_value(1).run()
    at.file_uploader(key="upload_file").set_value(("k.pftrace.gz", blob, "application/gzip"))
    at.run()
    assert not at.exception
    assert "Loaded k.pftrace.gz: measured mi355x R=1 L=1, 256 CTAs" in texts(at.success)
    said = "a partial trace: 248 of 256 CTAs recorded nothing (2, 3, 4,"
    assert said in texts(at.success)
    # a sparse trace (8 CTAs recorded) still draws, follows hand-offs and compares; every
    # view names what it lacks, and Compare never calls it conforming
    for view in ("Timeline", "Follow a hand-off", "Compare"):
        goto(at, view)
        assert at.get("plotly_chart") or at.get("image"), view  # the timeline's: a picture
        assert "248 of 256 CTAs recorded nothing" in texts(at.warning), view
    assert "conforms" not in texts(at.success)
    goto(at, "Bring a trace")
    # a truncated ktrace is refused with a message, never a traceback
    at.file_uploader(key="upload_file").set_value(("t.pftrace.gz", blob[:300], "application/gzip"))
    at.run()
    assert not at.exception
    assert "Could not load t.pftrace.gz" in texts(at.error)


def test_a_view_that_breaks_says_so_without_a_traceback(
    empty_traces: Path, make_app, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kda_sim.app import main

    def broken(ctx) -> None:
        raise ValueError("a record the view did not expect")

    at = make_app()
    monkeypatch.setitem(main.VIEWS, "Compare", broken)
    at.sidebar.radio(key="view").set_value("Compare").run()
    assert not at.exception
    assert "The Compare view could not show" in texts(at.error)
    assert "a record the view did not expect" in texts(at.error)


def test_a_broken_bundled_trace_falls_back_to_the_simulation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make_app
) -> None:
    d = tmp_path / "traces"
    d.mkdir()
    (d / "bad.json").write_text('{"traceEvents": [], "otherData": {"format": "nope"}}')
    monkeypatch.setenv("KDA_SIM_TRACES", str(d))
    at = make_app()
    assert "Could not open trace bad.json" in texts(at.error)
    assert "not a kda-sim timeline" in texts(at.error)
    assert figure_of(at)["data"]  # the default simulation is drawn instead
    assert (d / "bad.json").read_text().startswith('{"traceEvents"')  # left as it was


def test_a_stuck_real_trace_shows_its_chain_on_the_timeline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make_app
) -> None:
    from apphelp import measured_like

    from kda_sim.timeline.chrome import write_chrome

    d = tmp_path / "traces"
    d.mkdir()
    # the seed's build at 4x2: 132 slots for 256 CTAs
    write_chrome(measured_like("h200-stock", 4, 2), d / "hang.json")
    monkeypatch.setenv("KDA_SIM_TRACES", str(d))
    at = make_app()
    assert "This run does not finish" in texts(at.error)
    chain = texts(at.markdown)
    assert "**CTA 0** (attn) in `k.conv` on PROJ[" in chain and "never became resident" in chain
    names = [t["name"] for t in figure_of(at)["data"]]
    assert "wait-for chain" in names and "stuck (waits)" in names
    assert {m.label: m.value for m in at.metric}["Real makespan"] == "—"


def test_a_trace_without_puts_gets_inferred_producers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make_app
) -> None:
    """Our kernel's traces record polls but no puts: the critical path and the hand-off
    arrows then come from producers inferred from the model, and say so."""
    from apphelp import measured_like

    from kda_sim.timeline.chrome import write_chrome

    tl = measured_like()
    for c in tl.ctas:
        c.puts = []
        for p in c.polls:
            p.producer = p.put_time = p.put_ref = None
    d = tmp_path / "traces"
    d.mkdir()
    write_chrome(tl, d / "polls_only.json")
    monkeypatch.setenv("KDA_SIM_TRACES", str(d))
    at = make_app()
    assert "inferred from the model" in texts(at.caption)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Critical path"] != "0 hand-offs"
    hover = "".join(
        next(t for t in figure_of(at)["data"] if t["name"] == "k.conv (real)")["hovertext"]
    )
    assert "(inferred: the put is not recorded)" in hover
    goto(at, "Follow a hand-off")
    assert "The trace records no puts" in texts(at.info)
    arrows = [a for a in figure_of(at)["layout"]["annotations"] if a.get("showarrow")]
    assert len(arrows) == 1 and "inferred" in arrows[0]["hovertext"]


def test_a_run_whose_ctas_run_two_kda_tasks_shows_them_by_slot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make_app
) -> None:
    from apphelp import measured_like

    from kda_sim.timeline.chrome import to_chrome

    d = tmp_path / "traces"
    d.mkdir()
    (d / "h200_R4_L1.json").write_text(json.dumps(to_chrome(measured_like(R=4, L=1))))
    monkeypatch.setenv("KDA_SIM_TRACES", str(d))
    at = stage_tables(make_app())
    assert len(at.dataframe) == 3  # the stages, by task slot, by what shares the SM
    slots = at.dataframe[1].value
    second = slots[slots["task slot"] == 2]
    assert set(second["stage"]) == {"k.stage", "k.conv", "k.gates", "k.recur", "k.norm"}
    assert (second["real count"] == 128).all() and (second["sim count"] == 128).all()
    assert "by task slot" in texts(at.caption)


def test_one_task_a_cta_shows_no_slot_table(empty_traces: Path, make_app) -> None:
    at = stage_tables(make_app())
    assert len(at.dataframe) == 2  # the stages, and by what shares the SM: one task a CTA
    assert "by task slot" not in texts(at.caption)


def test_role_stages_show_by_what_shares_the_sm(one_trace: Path, make_app) -> None:
    at = stage_tables(make_app())
    assert "what shares the CTA's SM" in texts(at.caption)
    table = at.dataframe[-1].value.set_index(["stage", "beside"])
    # the measured trace and its simulation, a row for gemv CTAs beside each kind of CTA
    gemv0 = table.loc["gemv0"]
    assert {"attn", "gemv"} <= set(gemv0.index)
    assert gemv0.loc["gemv", "real count"] > 0 and gemv0.loc["gemv", "sim count"] > 0
    assert (gemv0["real max us"] >= gemv0["real median us"]).all()


def test_the_default_simulation_beside_bundled_traces_points_to_them(
    one_trace: Path, make_app
) -> None:
    at = make_app()
    sim = next(o for o in at.sidebar.selectbox(key="run_choice").options if "simulated" in o)
    at.sidebar.selectbox(key="run_choice").set_value(sim).run()
    captions = texts(at.caption)
    assert "no real trace" not in captions
    assert "bundled real traces (1 in" in captions


def test_no_view_shows_internal_labels(one_trace: Path, make_app) -> None:
    import re

    from kda_sim.app.main import RUNLESS, VIEWS

    at = make_app()
    assert "Modules from other issues" not in [e.label for e in at.sidebar.expander]
    for view in [*VIEWS, *RUNLESS]:
        goto(at, view)
        shown = "\n".join(
            texts(getattr(at, kind))
            for kind in ("markdown", "caption", "info", "warning", "error", "success")
        )
        assert not re.search(r"\bissues? \d", shown), (view, shown)
        assert "not in this checkout" not in shown and "yet" not in shown.split(), view


def test_clock_offsets_on_a_device_wide_clock_say_so_instead_of_an_empty_chart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make_app
) -> None:
    import shutil

    d = tmp_path / "traces"
    d.mkdir()
    shutil.copy(Path(__file__).resolve().parents[2] / "traces" / "k1_h200_R1_L1.json.gz", d)
    monkeypatch.setenv("KDA_SIM_TRACES", str(d))
    at = goto(make_app(), "Compare")
    assert "One clock for the whole GPU" in texts(at.caption)
    titles = [
        json.loads(c.proto.spec)["layout"].get("title", {}).get("text", "")
        for c in at.get("plotly_chart")
    ]
    assert not any("offset of each unit's clock" in t for t in titles)


def test_timeline_rows_by_role_with_a_role_expanded_and_a_window(one_trace: Path, make_app) -> None:
    at = make_app()
    at.radio(key="tl_rows").set_value("by role").run()
    fig = figure_of(at)
    ticks = fig["layout"]["yaxis"]["ticktext"]
    assert len(ticks) == 3 and all("×" in t for t in ticks)  # attn, gemv, idle
    assert any(t["name"] == "critical path" for t in fig["data"])
    at.multiselect(key="tl_expand").set_value(["attn"]).run()
    ticks = figure_of(at)["layout"]["yaxis"]["ticktext"]
    assert sum(t.startswith("CTA ") for t in ticks) == 56 and len(ticks) == 58
    window = next(s for s in at.slider if str(s.key).startswith("tl_window|"))
    window.set_value((1.0, 4.0)).run()
    assert figure_of(at)["layout"]["xaxis"]["range"] == [1.0, 4.0]


def test_tags_view_checks_the_open_runs_shape_and_draws_a_stale_pass(
    empty_traces: Path, make_app
) -> None:
    at = goto(make_app(), "Tags")
    assert "SAFE" in texts(at.success) and "2x2" in texts(at.success)
    assert at.multiselect(key="tags_shapes").value == ["2x2"]
    assert len(at.dataframe) == 2  # the slot tags and the pair classes
    at.text_input(key="tags_nb").set_value("8,8").run()
    at.multiselect(key="tags_faults").set_value(["drop-slot"]).run()
    assert "UNSAFE" in texts(at.error)
    assert "same step" in texts(at.warning)
    assert figure_of(at)["layout"]["shapes"]  # the launches in a row
    at.text_input(key="tags_nb").set_value("8,x").run()
    assert "integers" in texts(at.error)


def test_tags_view_says_when_a_kernel_has_no_tag_model() -> None:
    def script() -> None:
        from pathlib import Path

        from kda_sim.app.data import Run
        from kda_sim.app.views import tags
        from kda_sim.app.views.common import Ctx
        from kda_sim.engine import simulate
        from kda_sim.kernels.registry import get
        from kda_sim.machine.profile import load_profile

        spec = get("pingpong")
        tl = simulate(spec.default_config(), load_profile("h200", kernel=spec)).timeline
        tags.render(Ctx(Path("."), Run("pingpong", "simulated", None, tl), "pp"))

    at = AppTest.from_function(script, default_timeout=120).run()
    assert not at.exception
    assert "not available for the kernel 'pingpong'" in texts(at.info)


def test_timeline_view_draws_a_monomoe_run() -> None:
    """A non-K1 kernel's simulated run: its own roles and stages fill the filters and the
    figure (K1's names would leave it empty)."""

    def script() -> None:
        from pathlib import Path

        from kda_sim.app.data import Run
        from kda_sim.app.views import timeline
        from kda_sim.app.views.common import Ctx
        from kda_sim.engine import simulate
        from kda_sim.kernels.registry import get
        from kda_sim.machine.profile import load_profile

        spec = get("monomoe")
        tl = simulate(spec.default_config(), load_profile("h200", kernel=spec)).timeline
        timeline.render(Ctx(Path("."), Run("monomoe", "simulated", None, tl), "mm"))

    at = AppTest.from_function(script, default_timeout=120).run()
    no_failure(at)
    assert at.multiselect(key="tl_roles").value == ["worker"]
    stages = ["route", "sort", "shared_gu", "gemm1", "shared_down", "gemm2"]
    assert at.multiselect(key="tl_stages").value == stages
    fig = figure_of(at)
    drawn = [t["name"] for t in fig["data"] if t.get("name") in stages]
    assert drawn == stages

    def ys(t: dict) -> list[float]:  # plotly sends arrays as typed base64
        y = t["y"]
        if isinstance(y, dict):
            return np.frombuffer(base64.b64decode(y["bdata"]), dtype=y["dtype"]).tolist()
        return list(y)

    rows = {y for t in fig["data"] if t.get("name") in stages for y in ys(t)}
    assert len(rows) == 4  # a row a CTA of the 4-CTA grid


FITTED_SAID = "k1 costs fitted on h200 by kda-sim calibrate"
SEED_SAID = "k1 stock costs for h200: the seed's build"


def test_every_view_says_which_profile_and_costs_it_used(empty_traces: Path, make_app) -> None:
    """The H200 runs K1's fitted costs and every view says so; the stock ones, picked by
    their name, say they are the seed's build (issue 37, profiles that cannot mislead)."""
    from kda_sim.app.main import RUNLESS, VIEWS

    at = make_app()
    for view in VIEWS:
        goto(at, view)
        assert f"Simulated on profile h200: {FITTED_SAID}" in texts(at.caption), view
    goto(at, "What-if")
    assert f"Simulated on profile h200: {FITTED_SAID}" in texts(at.caption)
    at.selectbox(key="wi_gpu").set_value("h200-stock").run()
    assert f"on profile h200-stock: {SEED_SAID}" in texts(at.caption)
    assert "DEADLOCK" not in texts(at.error)  # the open run's shape, 2x2, fits either way
    goto(at, "Safety map")
    assert f"Checked on profile h200: {FITTED_SAID}" in texts(at.caption)
    at.selectbox(key="sm_gpu").set_value("h200-stock").run()
    assert f"Checked on profile h200-stock: {SEED_SAID}" in texts(at.caption)
    for view in RUNLESS:
        goto(at, view)
        assert "Checked on profile " in texts(at.caption), view
