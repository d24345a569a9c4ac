"""The registry: built-ins by name, installed kernels by entry point, files by path; a
broken file is an InvalidInput naming its file and line."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from kda_sim.errors import InvalidInput
from kda_sim.kernels import registry
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.spec import KernelSpec, hook
from kda_sim.machine import load_gpu, load_profile

EXAMPLE = Path(registry.__file__).parent / "examples" / "pingpong.py"


def test_builtins_are_registered_and_satisfy_the_interface() -> None:
    assert {"k1", "pingpong"} <= set(registry.names())
    for name in ("k1", "pingpong"):
        spec = registry.get(name)
        assert isinstance(spec, KernelSpec)
        assert spec.name == name
        cfg = spec.default_config()
        assert registry.spec_for(cfg) is spec
        launch = spec.build(cfg)
        assert list(launch.space.names) == list(spec.regions(cfg))
        assert {p.role for p in launch.programs} <= set(spec.roles)
        res = spec.resources(cfg, load_gpu("h200"))
        assert res.threads > 0 and res.regs_per_thread > 0


def test_k1_spec_is_the_launch_config() -> None:
    k1 = registry.get("k1")
    cfg = LaunchConfig(2, 2)
    assert k1.config_from_dict(k1.config_to_dict(cfg)) == cfg
    assert hook(k1, "check_fits") is not None
    assert hook(registry.get("pingpong"), "check_fits") is None
    assert set(k1.cost_keys) <= set(load_profile("mi355x").costs)


def test_unknown_name_lists_the_known() -> None:
    with pytest.raises(InvalidInput, match="pingpong"):
        registry.get("no-such-kernel")


def test_a_kernel_by_path(tmp_path: Path) -> None:
    f = tmp_path / "my_kernel.py"
    f.write_text(EXAMPLE.read_text().replace('name="pingpong"', 'name="mine"'))
    spec = registry.load_kernel(f)
    assert spec.name == "mine" and registry.get("mine") is spec
    assert registry.get(str(f)).name == "mine"


def _broken(tmp_path: Path, body: str) -> Path:
    f = tmp_path / "broken.py"
    f.write_text(textwrap.dedent(body))
    return f


def test_an_exception_at_import_names_file_and_line(tmp_path: Path) -> None:
    f = _broken(tmp_path, "x = 1\ny = 1 / 0\n")
    with pytest.raises(InvalidInput) as e:
        registry.load_kernel(f)
    assert f"{f.resolve()}:2" in str(e.value) and "ZeroDivisionError" in str(e.value)


def test_a_syntax_error_names_file_and_line(tmp_path: Path) -> None:
    f = _broken(tmp_path, "x = 1\ndef (:\n")
    with pytest.raises(InvalidInput, match=r"broken\.py:2"):
        registry.load_kernel(f)


def test_a_file_without_kernel(tmp_path: Path) -> None:
    f = _broken(tmp_path, "x = 1\n")
    with pytest.raises(InvalidInput, match="defines no KERNEL"):
        registry.load_kernel(f)
    g = _broken(tmp_path, "KERNEL = object()\n")
    with pytest.raises(InvalidInput, match="lacks"):
        registry.load_kernel(g)


def test_an_exception_in_build_names_file_and_line(tmp_path: Path) -> None:
    text = EXAMPLE.read_text().replace('name="pingpong"', 'name="badbuild"')
    text = text.replace(
        "    space = CellSpace.from_sizes(regions(cfg))\n",
        "    space = CellSpace.from_sizes(regions(cfg))\n    raise RuntimeError('boom')\n",
    )
    f = tmp_path / "badbuild.py"
    f.write_text(text)
    spec = registry.load_kernel(f)
    line = text.splitlines().index("    raise RuntimeError('boom')") + 1
    with pytest.raises(InvalidInput) as e:
        spec.build(spec.default_config())
    assert f"{f.resolve()}:{line}" in str(e.value) and "boom" in str(e.value)


def test_entry_points_are_found(monkeypatch: pytest.MonkeyPatch) -> None:
    class EP:
        name = "fromapackage"
        value = "somepackage.kernel:KERNEL"

        def load(self) -> object:
            from kda_sim.kernels.examples.pingpong import KERNEL

            return KERNEL

    monkeypatch.setattr(registry, "_entry_points", lambda: {"fromapackage": EP()})
    assert "fromapackage" in registry.names()
    assert registry.get("fromapackage").stages == ("produce", "consume")


def test_the_public_face() -> None:
    import kda_sim

    k = kda_sim.get_kernel("pingpong")
    res = kda_sim.simulate(k.default_config(), kda_sim.load_gpu("h200"))
    assert isinstance(res.timeline, kda_sim.Timeline) and not res.timeline.deadlock
    assert set(kda_sim.__all__) <= set(dir(kda_sim))
    with pytest.raises(AttributeError):
        _ = kda_sim.no_such_name


@pytest.mark.parametrize(
    ("old", "new", "says"),
    [
        ("cell = space.gid(0, [i])", "cell = space.gid(3, [i])", "IndexError: region 3"),
        (
            'return {"VAL": cfg.rounds}',
            'return {"VAL": -cfg.rounds}',
            "region 'VAL' has size -1: sizes are integers >= 0",
        ),
    ],
)
def test_a_broken_build_names_file_and_line(
    tmp_path: Path, old: str, new: str, says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A poll or put of a region that does not exist, a negative size: exit 2 with the
    kernel's file and line."""
    from kda_sim.cli import main

    text = EXAMPLE.read_text().replace('name="pingpong"', f'name="broken{len(new)}"')
    assert old in text
    text = text.replace(old, new)
    f = tmp_path / f"broken{len(new)}.py"
    f.write_text(text)
    assert main(["simulate", "--kernel", str(f)]) == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err
    assert re.search(rf"{re.escape(str(f.resolve()))}:\d+: ", err), err


def test_an_unhashable_config_is_refused(tmp_path: Path) -> None:
    text = EXAMPLE.read_text().replace("@dataclass(frozen=True)", "@dataclass")
    f = tmp_path / "unhashable.py"
    f.write_text(text.replace('name="pingpong"', 'name="unhashable"'))
    with pytest.raises(InvalidInput, match="hashable"):
        registry.load_kernel(f)


def test_k1_hooks() -> None:
    k1 = registry.get("k1")
    assert "step_tag" in hook(k1, "tag_model").schemes
    assert hook(k1, "mutations") and set(hook(k1, "trace_decoders")) == {"stamps", "ktrace"}
    assert hook(k1, "isa_presets")
    pingpong = registry.get("pingpong")
    assert all(hook(pingpong, h) is None for h in ("mutations", "tag_model", "isa_presets"))


def test_k1_check_hooks() -> None:
    from kda_sim.kernels.k1.config import LaunchConfig

    k1 = registry.get("k1")
    cfg = LaunchConfig(2, 2, kda0=7)
    assert hook(k1, "task_rotation")(cfg) == (LaunchConfig(2, 2), 7)
    assert hook(k1, "task_rotation")(LaunchConfig(2, 2)) is None
    fixes = list(hook(k1, "placement_fixes")(cfg, 132))
    kda0s = [c.kda0 for c, _, _ in fixes]
    assert kda0s[0] == 132 and 7 not in kda0s and len(set(kda0s)) == len(kda0s)
    assert all(knob == "kda0" and text == f"kda0 = {c.kda0}" for c, knob, text in fixes)
    (accepted,) = hook(k1, "accepted_waits")
    assert accepted.producers == "the attn CTAs"
    words = hook(k1, "name_flagged")("X", 3, 3)
    assert (words.flag, words.writer, words.unit) == ("XRDY[3]", "attn CTA 3", "slices")
    assert hook(k1, "load_switches") == {"mix.in_nw": "nw_first", "k.on_w": "onw_first"}
    pingpong = registry.get("pingpong")
    assert all(hook(pingpong, h) is None for h in ("task_rotation", "accepted_waits"))


@pytest.mark.parametrize(
    ("old", "new", "needle"),
    [
        (
            'roles=("producer", "consumer")',
            'roles=["producer", "consumer"]',
            "roles must be a tuple",
        ),
        (
            'roles=("producer", "consumer")',
            'roles=("producer", "")',
            r"roles\[1\] must be a non-empty",
        ),
        (
            'roles=("producer", "consumer")',
            'roles=("producer", 3)',
            r"roles\[1\] must be a non-empty",
        ),
        (
            'stages=("produce", "consume")',
            'stages=("produce", "produce")',
            r"stages names \['produce'\] more than once",
        ),
        (
            '"consumer": "#2ca02c"}',
            '"reader": "#2ca02c"}',
            r"role_colors keys \['reader'\] are not among the roles",
        ),
        (
            '"consume": "#9467bd"}',
            '"eat": "#9467bd"}',
            r"stage_colors keys \['eat'\] are not among the stages",
        ),
        ('"consume": "#9467bd"}', '"consume": 5}', r"stage_colors\['consume'\] must be a colour"),
        (
            'cost_keys=("pp.produce", "pp.consume")',
            'cost_keys=("pp.produce", None)',
            r"cost_keys\[1\] must be",
        ),
        (
            'cost_keys=("pp.produce", "pp.consume")',
            'cost_keys="pp.produce"',
            "cost_keys must be a tuple",
        ),
    ],
)
def test_a_kernel_file_with_bad_fields_names_the_kernel_line(
    tmp_path: Path, old: str, new: str, needle: str
) -> None:
    text = EXAMPLE.read_text().replace('name="pingpong"', 'name="badfields"')
    assert old in text
    f = tmp_path / "badfields.py"
    f.write_text(text.replace(old, new))
    line = text.splitlines().index("KERNEL = Kernel(") + 1
    with pytest.raises(InvalidInput, match=needle) as e:
        registry.load_kernel(f)
    assert f"{f.resolve()}:{line}" in str(e.value)
    assert "badfields" not in registry.names()


@pytest.mark.parametrize(
    ("size", "needle"),
    [("-1", "size -1"), ("2.5", "size 2.5"), ("True", "size True"), ("'8'", "size '8'")],
)
def test_a_kernel_file_with_bad_region_sizes_is_refused_at_load(
    tmp_path: Path, size: str, needle: str
) -> None:
    text = EXAMPLE.read_text().replace('name="pingpong"', 'name="badregions"')
    marker = "def regions(cfg: PingPongConfig) -> dict[str, int]:\n"
    assert marker in text
    f = tmp_path / "badregions.py"
    text = text.replace(marker, f"{marker}    return {{'r': {size}}}\n")
    f.write_text(text)
    line = text.splitlines().index("KERNEL = Kernel(") + 1
    with pytest.raises(InvalidInput, match=re.escape(needle) + ".*integers >= 0") as e:
        registry.load_kernel(f)
    assert f"{f.resolve()}:{line}" in str(e.value)


def test_region_sizes_are_checked_at_every_call(tmp_path: Path) -> None:
    """A configuration other than the default may still give a bad size."""
    text = EXAMPLE.read_text().replace('name="pingpong"', 'name="lateregions"')
    marker = "def regions(cfg: PingPongConfig) -> dict[str, int]:\n"
    f = tmp_path / "lateregions.py"
    f.write_text(
        text.replace(
            marker, f"{marker}    if cfg != PingPongConfig():\n        return {{'r': -4}}\n"
        )
    )
    spec = registry.load_kernel(f)
    other = spec.config_from_dict({**spec.config_to_dict(spec.default_config()), "rounds": 3})
    with pytest.raises(InvalidInput, match="size -4"):
        spec.regions(other)


def test_a_built_in_kernels_own_file_is_that_kernel() -> None:
    # loaded by path (the app's example files) it stays one kernel with one configuration
    # type, so a timeline's configuration compares equal to the built-in's
    assert registry.load_kernel(EXAMPLE) is registry.get("pingpong")


def test_a_file_may_not_take_another_kernels_name(tmp_path: Path) -> None:
    f = tmp_path / "copy.py"
    f.write_text(EXAMPLE.read_text())
    with pytest.raises(InvalidInput, match="'pingpong' is a built-in or installed") as e:
        registry.load_kernel(f)
    assert str(f.resolve()) in str(e.value)
    assert registry.get("pingpong").config_type.__module__ == "kda_sim.kernels.examples.pingpong"
    g = tmp_path / "other.py"
    g.write_text(EXAMPLE.read_text().replace('name="pingpong"', 'name="once"'))
    assert registry.load_kernel(g).name == "once"
    assert registry.load_kernel(g).name == "once"  # the same file again: reloaded
    h = tmp_path / "third.py"
    h.write_text(g.read_text())
    third = registry.load_kernel(h)
    assert registry.get("once") is third  # a later file of the name replaces it
