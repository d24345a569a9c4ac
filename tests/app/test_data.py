"""The app's data layer and figures, without a page."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest
from apphelp import measured_like

from kda_sim.app import data, figures
from kda_sim.app.outcome import guarded, plain
from kda_sim.app.views.export import perfetto_bytes, png_bytes
from kda_sim.errors import TraceFormatError
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.timeline.chrome import from_chrome, to_chrome
from kda_sim.timeline.model import StageSpan


@pytest.mark.parametrize(
    ("gpu", "name"),
    [("h200", "h200"), ("NVIDIA H200", "h200"), ("AMD Instinct MI355X", "mi355x"), ("A100", None)],
)
def test_profile_name(gpu: str, name: str | None) -> None:
    assert data.profile_name(gpu) == name


def test_parse_upload_reads_json_and_gzip() -> None:
    raw = json.dumps(to_chrome(measured_like())).encode()
    for name, blob in (("a.json", raw), ("a.json.gz", gzip.compress(raw))):
        tl = data.parse_upload(name, blob)
        assert tl.meta.source == "measured" and len(tl.ctas) == 256


@pytest.mark.parametrize(
    ("name", "blob", "words"),
    [
        ("x.json", b"[1, 2", "not JSON"),
        ("x.json", "é".encode("latin-1"), "not a text file"),
        ("x.json", b'{"traceEvents": 3, "otherData": {"format": "kda-sim timeline"}}', ""),
        ("x.bin", b"\x00\x01", "unknown file type"),
        ("x.json", b"", "empty"),
    ],
)
def test_parse_upload_errors_are_trace_format_errors(name: str, blob: bytes, words: str) -> None:
    with pytest.raises(TraceFormatError) as e:
        data.parse_upload(name, blob)
    assert name in str(e.value) and words in str(e.value)


def test_parse_upload_rejects_a_producer_outside_the_trace() -> None:
    obj = to_chrome(measured_like())
    poll = next(e for e in obj["traceEvents"] if e.get("cat") == "poll")
    poll["args"]["producer"] = 999
    with pytest.raises(TraceFormatError, match=r"producer.*999"):
        data.parse_upload("p.json", json.dumps(obj).encode())


def test_simulation_of_a_measured_trace_uses_its_configuration() -> None:
    tl = measured_like("h200", 1, 2)
    out = data.simulation_of(tl)
    assert out.timeline is not None
    m = out.timeline.meta
    assert (m.source, m.gpu, m.R, m.L) == ("simulated", "h200", 1, 2)
    assert data.simulation_of(tl) is out  # cached


def test_a_trace_of_the_nw_first_variant_is_simulated_as_one() -> None:
    tl = measured_like("h200", 1, 1)
    tl.meta.nw_first = True
    out = data.simulation_of(tl)
    assert out.timeline is not None and out.timeline.meta.nw_first
    assert (
        out.timeline.makespan != data.simulation_of(measured_like("h200", 1, 1)).timeline.makespan
    )


def test_an_uploads_shape_carries_the_variants() -> None:
    from apphelp import stamps_of

    blob = stamps_of(measured_like("mi355x", 1, 1))
    shape = {"R": 1, "L": 1, "gpu": "mi355x", "nw_first": True}
    assert data.parse_upload("s.npy", blob, shape).meta.nw_first
    assert not data.parse_upload("s.npy", blob, shape | {"nw_first": False}).meta.nw_first
    both = data.parse_upload("s.npy", blob, shape | {"onw_first": True}).meta.config()
    assert both.variants() == ("nw_first", "onw_first")


def test_invalid_simulation_is_an_outcome_not_an_exception() -> None:
    out = data.simulate_cached("h200", LaunchConfig(8, 4))
    assert out.timeline is None and out.verdict == "invalid" and "S = R L" in out.error


def test_merge_joins_sub_resolution_spans() -> None:
    spans = [(float(i), i + 0.1, f"s{i}") for i in range(10)] + [(100.0, 101.0, "big")]
    out = figures._merge(spans, res=1.0)
    assert len(out) == 2
    assert out[0][:2] == (0.0, 9.1) and "10 spans merged" in out[0][2]
    assert out[1][2] == "big"


def test_figure_bar_count_stays_bounded_for_dense_traces() -> None:
    tl = measured_like()
    c = tl.ctas[100]
    base = c.stages[-1].end
    # 5000 tiny spans on one CTA: a dense measured trace
    c.stages += [
        StageSpan("k.norm", 9, base + i * 0.01, base + i * 0.01 + 0.005) for i in range(5000)
    ]
    fig = figures.timeline_figure([figures.Layer("real", tl, False)], polls=False)
    bars = sum(len(t.base) for t in fig.data if t.type == "bar")
    assert bars < 3000


def test_rows_group_by_role() -> None:
    tl = measured_like()
    tl.ctas[3].role = "idle"  # a CTA out of the usual order still lands in its group
    rows = figures.rows_of(tl, figures.Filter())
    roles = [tl.ctas[c].role for c in rows]
    assert roles == sorted(roles, key=["attn", "gemv", "idle"].index)
    assert rows[-4] == 3


def test_poll_wait_matrix_sums_waits() -> None:
    tl = measured_like()
    rows = figures.rows_of(tl, figures.Filter())
    z, stages = figures.poll_wait_matrix(tl, rows)
    assert z.shape == (256, len(stages)) and "load_x" in stages
    c = tl.ctas[60]
    want = sum(p.satisfied - p.first_issue for p in c.polls if p.stage == "load_x") / 1e3
    assert z[rows.index(60), stages.index("load_x")] == pytest.approx(want)
    assert np.all(z >= 0)


def test_exports() -> None:
    tl = measured_like()
    png = png_bytes(tl)
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000
    back = from_chrome(json.loads(perfetto_bytes(tl)))
    assert back.makespan == pytest.approx(tl.makespan)
    assert any(e.get("ph") == "s" for e in json.loads(perfetto_bytes(tl))["traceEvents"])


def test_a_failure_becomes_a_message_naming_the_function() -> None:
    out = guarded(LaunchConfig, "not an int", 1)
    assert out.ok  # the dataclass does not check types on construction
    out = guarded(LaunchConfig)  # missing arguments
    assert not out.ok and "TypeError" in out.message
    assert out.message.startswith("kda_sim.kernels.k1.config.LaunchConfig failed")


def test_plain_turns_results_into_data() -> None:
    tl = measured_like()
    p = plain({"poll": tl.ctas[0].polls[0], "arr": np.arange(3)})
    assert p["poll"]["label"] == "PART" and p["arr"] == [0, 1, 2]


def test_the_simulation_cache_keys_on_the_profiles_costs_not_its_name(
    tmp_path, monkeypatch
) -> None:
    """A name that comes to mean other costs (here: a kernel's fitted overlay written
    while the app runs) gets a new key, never the simulation made before."""
    import textwrap

    from kda_sim.kernels.registry import get

    folder = tmp_path / "costs"
    folder.mkdir()
    costs = {"pp.produce": [500.0, 0.0], "pp.consume": [300.0, 0.0]}
    (folder / "h200.json").write_text(json.dumps({"kernel": "pp3", "gpu": "h200", "costs": costs}))
    src = f"""
        from dataclasses import dataclass, replace
        from kda_sim.kernels.examples.pingpong import KERNEL as PP, PingPongConfig

        @dataclass(frozen=True)
        class PP3Config(PingPongConfig):
            pass

        KERNEL = replace(PP, name="pp3", config_type=PP3Config, costs_dir={str(folder)!r})
        """
    path = tmp_path / "pp3.py"
    path.write_text(textwrap.dedent(src))
    kernel = str(path)
    spec = get(kernel)
    before = data.profile_id("h200", kernel)
    stock = data.simulate_kernel("h200", kernel, spec.config_to_dict(spec.default_config()))
    assert stock.costs == "pp3 stock costs for h200" and stock.profile == "h200"
    fitted = {**costs, "pp.produce": [5000.0, 0.0]}
    prov = {"by": "kda-sim calibrate", "date": "2026-12-05 13:00 UTC"}
    d = {"kernel": "pp3", "gpu": "h200", "costs": fitted, "provenance": prov}
    (folder / "h200.fitted.json").write_text(json.dumps(d))
    assert data.profile_id("h200", kernel) != before
    now = data.simulate_kernel("h200", kernel, spec.config_to_dict(spec.default_config()))
    assert now.costs.startswith("pp3 costs fitted on h200 by kda-sim calibrate")
    assert now.timeline.makespan > stock.timeline.makespan


def test_the_what_ifs_default_gpu_runs_what_the_open_trace_was_simulated_on() -> None:
    """Opening What-if on a bundled H200 trace without changing anything showed "-42.0 %
    vs the open run's simulation" (stock costs against K1's fit): now both are K1's fit."""
    from pathlib import Path

    from kda_sim.importers.chrome import read_kernel_trace

    tl = read_kernel_trace(Path(__file__).parents[2] / "traces" / "k1_h200_R1_L1.json.gz")
    run = data.simulation_of(tl)
    gpu = data.profile_name(tl.meta.gpu)  # what the view's GPU picker opens on
    picked = data.simulate_cached(gpu, tl.meta.config())
    assert gpu == "h200" and picked.costs == run.timeline.meta.extra["costs"]
    assert picked.timeline.makespan == run.timeline.makespan


def test_bundled_traces_list_every_kernels_and_open_on_the_tours(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every ``*.json`` and ``*.json.gz`` of the folder is listed, of any kernel, by name;
    the one the README's tour opens on first, though another kernel's sort before it."""
    for name in ("k1_h200_R2_L2.json.gz", data.OPENS_ON, "gridbarrier_h100_ctas8_rounds2.json.gz"):
        (tmp_path / name).write_text("{}")
    (tmp_path / "notes.txt").write_text("")
    monkeypatch.setenv(data.TRACES_ENV, str(tmp_path))
    assert [p.name for p in data.bundled_traces()] == [
        data.OPENS_ON,
        "gridbarrier_h100_ctas8_rounds2.json.gz",
        "k1_h200_R2_L2.json.gz",
    ]
    (tmp_path / data.OPENS_ON).unlink()  # without it, the first by name
    assert data.bundled_traces()[0].name == "gridbarrier_h100_ctas8_rounds2.json.gz"
