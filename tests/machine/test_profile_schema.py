"""A profile's numbers are checked on load: finite, in their physical range, of their type;
the message names the file, the field and the constraint."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kda_sim.cli import main
from kda_sim.errors import InvalidInput
from kda_sim.importers import caps
from kda_sim.machine.costs import read_costs
from kda_sim.machine.profile import load_profile, validate_profile

K1_COSTS = Path(__file__).parents[2] / "kda_sim" / "kernels" / "k1" / "costs"


def _h200() -> dict[str, Any]:
    return load_profile("h200-stock").to_dict()


def _write(tmp_path: Path, d: dict[str, Any], text: str | None = None) -> Path:
    p = tmp_path / "p.json"
    p.write_text(text if text is not None else json.dumps(d))
    return p


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (lambda d: d["costs"].__setitem__("gate", [-1.0, 0.0]), "costs.gate[0]"),
        (lambda d: d["latency_ns"].__setitem__("poll", 0.0), "latency_ns.poll"),
        (lambda d: d["latency_ns"].__setitem__("retry", 1e30), "latency_ns.retry"),
        (lambda d: d.__setitem__("units", 10**9), "units"),
        (lambda d: d.__setitem__("hbm_bytes_per_ns", 0), "hbm_bytes_per_ns"),
        (lambda d: d.__setitem__("in_order_loads", "false"), "in_order_loads"),
        (lambda d: d["kernel"].__setitem__("threads", 0), "kernel.threads"),
        (lambda d: d["kernel"].__setitem__("regs_per_thread", 0), "kernel.regs_per_thread"),
        (lambda d: d["kernel"].__setitem__("lds_bytes", 0), "kernel.lds_bytes"),
        (lambda d: d["costs"].__setitem__("gate", 3), "costs.gate"),
        (lambda d: d.pop("units"), "units"),
        (lambda d: d.__setitem__("xcds", 10**40), "xcds"),
    ],
)
def test_an_impossible_field_is_refused_naming_it(tmp_path: Path, edit: Any, field: str) -> None:
    d = _h200()
    edit(d)
    p = _write(tmp_path, d)
    with pytest.raises(InvalidInput) as e:
        load_profile(str(p))
    assert str(p) in str(e.value) and field in str(e.value)


@pytest.mark.parametrize("const", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_refused_at_parse(tmp_path: Path, const: str) -> None:
    text = json.dumps(_h200()).replace('"poll": 190.0', f'"poll": {const}')
    p = _write(tmp_path, {}, text)
    with pytest.raises(InvalidInput, match=const):
        load_profile(str(p))


@pytest.mark.parametrize(
    "text",
    ['{"units": ' + "9" * 5000 + "}", "[" * 100000 + "]" * 100000, b"\xff\xfe{".decode("latin-1")],
)
def test_huge_integers_deep_nesting_and_bad_bytes_are_refused(tmp_path: Path, text: str) -> None:
    p = tmp_path / "p.json"
    p.write_bytes(text.encode("latin-1"))
    with pytest.raises(InvalidInput, match=str(p)):
        load_profile(str(p))


def test_a_missing_profile_file_is_named_as_such() -> None:
    with pytest.raises(InvalidInput, match="no such profile file"):
        load_profile("nowhere/x.json")


def test_an_in_process_profile_with_nan_is_refused() -> None:
    prof = load_profile("h200-stock").with_params(poll=float("nan"))
    with pytest.raises(InvalidInput, match=r"latency_ns\.poll"):
        validate_profile(prof, "fit")


@pytest.fixture
def _restore_caps():
    yield
    caps.set_caps(caps.DEFAULT_MAX_INPUT_MB, caps.DEFAULT_MAX_EVENTS)


@pytest.mark.usefixtures("_restore_caps")
def test_a_profile_or_costs_file_over_the_input_cap_is_refused_unread(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prof = _write(tmp_path, _h200())
    overlay = tmp_path / "o.json"
    overlay.write_bytes(K1_COSTS.joinpath("h200.fitted.json").read_bytes())
    size = max(prof.stat().st_size, overlay.stat().st_size)
    caps.set_caps(max_input_mb=size / 2 / 2**20)
    for p in (prof, overlay):
        with pytest.raises(InvalidInput, match=r"bytes past the input cap") as e:
            load_profile(str(p))
        assert str(p) in str(e.value)
    with pytest.raises(InvalidInput, match=r"o\.json: \d+ bytes past the input cap"):
        read_costs(overlay, str(overlay))
    caps.set_caps(max_input_mb=2 * size / 2**20)  # under the cap: read as before
    assert load_profile(str(prof)).units == _h200()["units"]
    assert read_costs(overlay, str(overlay))["gpu"] == "h200"
    cap = f"{size / 2 / 2**20:g}"
    for flag in ("--gpu", "--profile"):
        assert main(["check", flag, str(prof), "--max-input-mb", cap]) == 2
        err = capsys.readouterr().err
        assert f"{prof}: " in err and f"past the input cap of {cap} MB" in err
