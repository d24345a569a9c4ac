"""`kda-sim isa`: exit codes, JSON, messages for files that are not ISA, code objects."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from kda_sim.cli import main
from kda_sim.isa.codeobj import to_assembly
from kda_sim.isa.model import polls_behind_weights, stage_ops
from kda_sim.isa.parser import parse
from kda_sim.isa.presets import K1_ACCEPTED
from kda_sim.kernels.k1.config import LaunchConfig

FIXTURES = Path(__file__).parent / "fixtures"
LLVM19 = Path("/usr/lib/llvm-19/bin")


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    rc = main(["isa", *argv])
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_exit_codes_follow_the_findings(capsys: pytest.CaptureFixture[str]) -> None:
    clear = str(FIXTURES / "gfx942" / "poll_clear.s")
    behind = str(FIXTURES / "gfx950" / "poll_after_weights.s")
    assert run([clear, "--preset", "probe"], capsys)[0] == 0
    rc, out, _ = run([behind, "--preset", "probe"], capsys)
    assert rc == 1 and "poll_behind_weights" in out
    assert run([behind, "--preset", "probe", "--accept", "probe MB"], capsys)[0] == 0
    assert run([str(FIXTURES / "gfx942" / "publish_undrained.s")], capsys)[0] == 1


def test_json_names_the_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run(
        [str(FIXTURES / "gfx942" / "poll_after_weights.s"), "--preset", "probe", "--json"], capsys
    )
    doc = json.loads(out)
    assert rc == 1 and doc["arch"] == "gfx942"
    [poll] = doc["kernels"][0]["polls"]
    assert [f["source"].split()[0] for f in poll["in_flight"]] == ["w", "w", "w"]
    assert doc["findings"][0]["kind"] == "poll_behind_weights"


def test_arg_class_overrides_by_name(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(FIXTURES / "gfx942" / "poll_after_weights.s")
    rc, out, _ = run([path, "--preset", "probe", "--arg-class", "w=staging", "--json"], capsys)
    assert rc == 0 and json.loads(out)["kernels"][0]["polls"][0]["by_class"] == {"staging": 3}


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        (b"just some words\n", "no AMDGPU kernel"),
        (b"\xff\xfe\x00binary", "not text"),
        (b"\x7fELF\x02\x01" + bytes(12) + (62).to_bytes(2, "little") + bytes(40), "not AMDGPU"),
    ],
)
def test_files_that_are_not_isa_get_a_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, needle: str
) -> None:
    f = tmp_path / "k.s"
    f.write_bytes(content)
    rc, out, err = run([str(f)], capsys)
    assert rc == 2 and needle in err and "Traceback" not in err + out


def test_missing_file_and_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run([str(tmp_path / "nope.s")], capsys)[0] == 2
    rc, _, err = run([str(tmp_path)], capsys)
    assert rc == 2 and "not a file" in err


def test_objdump_text_becomes_assembly_with_labels() -> None:
    dump = """
0000000000001700 <k>:
\ts_mov_b32 s0, 0                         // 000000001700: BE800080
\ts_sleep 1                               // 000000001704: BF8E0001
\tbuffer_load_dword v1, v0, s[8:11], 0 offen sc0 sc1 // 000000001708: E0501000 80020100
\ts_waitcnt vmcnt(0)                      // 000000001710: BF8C0F70
\tv_cmp_eq_u32_e32 vcc, s2, v1            // 000000001714: 7D940202
\ts_cbranch_vccz 65531                    // 000000001718: BF86FFFB <k+0x4>
\ts_endpgm                                // 00000000171C: BF810000
"""
    k = parse(to_assembly(dump, "gfx942")).kernels[0]
    assert k.labels == {".L_1704": 1}
    assert k.instrs[5].operands == (".L_1704",)


@pytest.mark.skipif(
    not (LLVM19 / "llvm-mc").exists(), reason="needs Debian llvm-19 (llvm-mc, ld.lld)"
)
def test_a_gfx942_code_object_is_disassembled(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    obj, co = tmp_path / "k.o", tmp_path / "k.hsaco"
    src = FIXTURES / "gfx942" / "poll_after_weights.s"
    subprocess.run([str(LLVM19 / "llvm-mc"), "-triple=amdgcn-amd-amdhsa-unknown", "-mcpu=gfx942",
                    "-filetype=obj", str(src), "-o", str(obj)], check=True)  # fmt: skip
    lld = shutil.which("ld.lld-19") or str(LLVM19 / "ld.lld")
    subprocess.run([lld, "-shared", str(obj), "-o", str(co)], check=True)
    rc, out, _ = run([str(co), "--json"], capsys)
    doc = json.loads(out)
    assert rc == 1 and doc["arch"] == "gfx942"
    assert doc["kernels"][0]["polls"][0]["by_class"] == {"weights": 3}  # by cache bits: no metadata


def test_the_model_accepts_only_the_gemv_xrdy_poll() -> None:
    for cfg in (LaunchConfig(1, 1), LaunchConfig(2, 3, nb=4)):
        assert polls_behind_weights(cfg) == set(K1_ACCEPTED)
        assert stage_ops(cfg)["load_x"] == [("XRDY", "poll")]
        assert stage_ops(cfg)["mix"][-1] == ("XRDY", "publish")


def test_undecoded_64_bit_words_take_their_second_half_and_resync() -> None:
    """An older decoder prints a word it does not know as ``.long``; on gfx9 a word with
    its top bits set is the first half of a 64-bit instruction, so what it made of the
    next word is dropped, and where that half swallowed the real next instruction the
    dump is decoded again from it."""
    from kda_sim.isa.codeobj import realign

    dump = """
0000000000001800 <k>:
\t.long 0xd2340507                         // 000000001800: D2340507
\ts_xor_b32 s2, s7, s35                    // 000000001804: 88022307
\tv_mov_b32_e32 v1, 0                      // 000000001808: 7E020280
\t.long 0xd3b78000                         // 00000000180C: D3B78000
\tbuffer_load_dword v1, v0, s[8:11], 0     // 000000001810: E0501000 80020100
\ts_endpgm                                 // 000000001818: BF810000
"""
    again = """
0000000000001814 <k+0x14>:
\ts_waitcnt vmcnt(0)                       // 000000001814: BF8C0F70
\ts_endpgm                                 // 000000001818: BF810000
"""
    calls: list[int] = []

    def rerun(start: int) -> str:
        calls.append(start)
        return again

    text, unknown, vmem = realign(dump, rerun)
    body = [line.split("//")[0].strip() for line in text.splitlines() if "//" in line]
    assert body == ["v_mov_b32_e32 v1, 0", "s_waitcnt vmcnt(0)", "s_endpgm"]
    assert (unknown, vmem, calls) == (2, 0, [0x1814])
