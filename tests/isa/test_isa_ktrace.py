"""`kda-sim isa` on FlyDSL builds with ktrace ranges (tests/isa/fixtures/ktrace/, from
scripts/isa_mailbox_fixtures.py's ``*_ktrace`` variants): ranges "producer.put" around
the put and "consumer.poll" around the poll and its read.

expected.json, written by reading the assembly: each event is a ``s_memrealtime`` then two
``s_buffer_store_dwordx4``, the second's third SGPR set just before it to
``0x1000001`` / ``0x1000002`` (push of event 1 / 2) or by ``s_brev_b32 s14, 64``
(0x02000000, a pop). A range's lines are those of its push and pop records. The
findings and polls are those of the same kernels built without ktrace (the mailbox
corpus), at other lines: tracing adds code and moves the schedule.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kda_sim.isa import analyze_path, analyze_text
from kda_sim.isa.report import FindingKind

KTRACE = Path(__file__).parent / "fixtures" / "ktrace"
MAILBOX = Path(__file__).parent / "fixtures" / "mailbox"
EXPECTED = json.loads((KTRACE / "expected.json").read_text())
ARGS = (
    ("x", "staging"),
    ("w", "weights"),
    ("mb", "mailbox"),
    ("out", "staging"),
    ("tag", "scalar"),
)


def test_the_fixtures_are_both_archs_each_with_its_name_table() -> None:
    files = sorted(KTRACE.glob("*/*.s"))
    assert {f.parent.name for f in files} == {"gfx942", "gfx950"}
    assert {f"{f.parent.name}/{f.stem}" for f in files} == set(EXPECTED["findings"])
    for f in files:
        assert json.loads(Path(f"{f}.ktrace.json").read_text()) == {
            "producer.put": 1,
            "consumer.poll": 2,
        }


@pytest.mark.parametrize("name", sorted(EXPECTED["findings"]))
def test_findings_polls_and_ranges_name_the_range(name: str) -> None:
    r = analyze_path(KTRACE / f"{name}.s", arg_layout=ARGS)
    k = r.kernels[0]
    assert sorted([str(f.kind), f.line, f.ktrace_range] for f in r.findings) == sorted(
        EXPECTED["findings"][name]
    )
    assert [[p.line, p.ktrace_range] for p in k.polls] == EXPECTED["polls"][name]
    assert [[x.label, x.begin_line, x.end_line] for x in k.ktrace_ranges] == EXPECTED["ranges"][
        name
    ]
    # the untraced build of the same kernel has the same kinds of findings
    base = name.removesuffix("_ktrace")
    plain = analyze_path(MAILBOX / f"{base}.s", arg_layout=ARGS)
    assert sorted({str(f.kind) for f in plain.findings}) == sorted(
        {str(f.kind) for f in r.findings}
    )


def test_the_text_names_the_range_of_each_finding_and_poll() -> None:
    text = analyze_path(KTRACE / "gfx950" / "relaxed_agent_sleep_ktrace.s").render()
    assert '; in ktrace range "consumer.poll"' in text.splitlines()[2]
    [finding] = [line for line in text.splitlines() if line.startswith("FINDING")]
    assert finding.startswith("FINDING unordered_read:")
    assert finding.endswith('(in ktrace range "consumer.poll")')
    assert '  ktrace range "producer.put" (event 1): lines 113-138' in text


def test_without_a_name_table_the_range_is_its_event_id() -> None:
    path = KTRACE / "gfx942" / "buffer_sc0_sc1_nosleep_ktrace.s"
    r = analyze_text(path.read_text(), str(path), arg_layout=ARGS)
    [f] = r.findings
    assert f.kind is FindingKind.UNPOLLED_FLAG_LOAD and f.ktrace_range == "#2"
    assert [x.label for x in r.kernels[0].ktrace_ranges] == ["#2", "#1"]


def test_a_build_without_ktrace_has_no_ktrace_keys() -> None:
    r = analyze_path(MAILBOX / "gfx950" / "relaxed_agent_sleep.s", arg_layout=ARGS)
    doc = json.loads(r.to_json())
    assert "ktrace_ranges" not in doc["kernels"][0]
    assert "ktrace_range" not in doc["kernels"][0]["polls"][0]
    assert doc["findings"] and "ktrace_range" not in doc["findings"][0]
    assert "ktrace" not in r.render()


def _event(time: str, word: str, store: str = "s[12:15]") -> str:
    return (
        f"\ts_memrealtime {time}\n\ts_waitcnt lgkmcnt(0)\n"
        f"\ts_buffer_store_dwordx4 s[16:19], s[20:23], s0\n{word}"
        f"\ts_buffer_store_dwordx4 {store}, s[20:23], s0\n"
    )


HEAD = '\t.amdgcn_target "amdgcn-amd-amdhsa--gfx942"\n\t.text\n\t.type k,@function\nk:\n'


def test_an_event_word_set_in_the_block_before_is_read() -> None:
    """LLVM hoists a packed word out of the record's block: the one write that reaches
    it on every path names the event."""
    text = (
        HEAD
        + "\ts_mov_b32 s14, 0x1000003\n"
        + ".LBB0_1:\n"
        + _event("s[16:17]", "")  # s14 set in the block before: push of 3
        + "\tbuffer_load_dword v1, off, s[8:11], 0 sc0 sc1\n"
        + _event("s[16:17]", "\ts_brev_b32 s14, 64\n")
        + "\ts_endpgm\n"
    )
    r = analyze_text(text)
    assert [(x.label, x.begin_line, x.end_line) for x in r.kernels[0].ktrace_ranges] == [
        ("#3", 10, 16)
    ]
    assert not any("ktrace" in n for n in r.notes)


def test_an_event_word_of_two_paths_or_none_is_noted_not_guessed() -> None:
    """Two constants reaching the record (a branch), or none (an argument register):
    the event is reported, not guessed."""
    two = (
        HEAD
        + "\ts_mov_b32 s14, 0x1000003\n"
        + "\ts_cbranch_scc0 .LBB0_2\n"
        + "\ts_mov_b32 s14, 0x1000004\n"
        + ".LBB0_2:\n"
        + _event("s[16:17]", "")
        + "\ts_endpgm\n"
    )
    none = HEAD + _event("s[16:17]", "") + "\ts_endpgm\n"
    for text in (two, none):
        r = analyze_text(text)
        assert r.kernels[0].ktrace_ranges == []
        assert any("its event word is not a constant" in n for n in r.notes)


def test_an_event_word_too_many_blocks_back_is_noted() -> None:
    """The walk back from a record is bounded (an input is not trusted): a word set
    more than MAX_BLOCKS blocks before its record is noted, one within is read."""
    from kda_sim.isa.ktrace import MAX_BLOCKS

    def chain(n: int) -> str:
        blocks = "".join(f".LBB0_{i}:\n\ts_nop 0\n" for i in range(n))
        return HEAD + "\ts_mov_b32 s14, 0x1000003\n" + blocks + _event("s[16:17]", "")

    near = analyze_text(chain(MAX_BLOCKS - 2) + _event("s[16:17]", "\ts_brev_b32 s14, 64\n"))
    assert [x.event_id for x in near.kernels[0].ktrace_ranges] == [3]
    far = analyze_text(chain(MAX_BLOCKS + 10) + "\ts_endpgm\n")
    assert any("its event word is not a constant" in n for n in far.notes)


def test_an_event_word_spilled_to_a_vgpr_lane_is_followed() -> None:
    """Under SGPR pressure LLVM spills the word to a VGPR lane (``v_writelane_b32``) and
    reloads it (``v_readlane_b32``) before the store: the constant spilled is read; a
    lane rewritten from a non-constant is not."""

    def spilled(source: str) -> str:
        return (
            HEAD
            + source
            + "\tv_writelane_b32 v196, s30, 15\n"
            + "\ts_mov_b32 s30, 0\n"  # the SGPR reused after the spill
            + ".LBB0_1:\n"
            + _event("s[16:17]", "\tv_readlane_b32 s14, v196, 15\n")
            + _event("s[16:17]", "\ts_brev_b32 s14, 64\n")
            + "\ts_endpgm\n"
        )

    r = analyze_text(spilled("\ts_mov_b32 s30, 0x1000007\n"))
    assert [(x.label, x.event_id) for x in r.kernels[0].ktrace_ranges] == [("#7", 7)]
    r = analyze_text(spilled("\ts_load_dword s30, s[0:1], 0x0\n"))
    assert r.kernels[0].ktrace_ranges == []
    assert any("its event word is not a constant" in n for n in r.notes)


def test_an_event_word_copied_between_sgprs_is_followed() -> None:
    """LLVM copies a word, or the pair it sits in, to another SGPR (``s_mov_b64
    s[14:15], s[30:31]`` in the K1's bounded-wait ktrace build): the constant copied is
    read, through a copy of a copy; a copy of a register that holds no constant is not."""

    def copied(source: str) -> str:
        return (
            HEAD
            + _event("s[16:17]", "\ts_mov_b32 s14, 0x1000005\n")  # push of event 5
            + source
            + "\ts_mov_b64 s[40:41], s[30:31]\n"
            + "\ts_mov_b32 s30, 0\n"  # the source reused after the copy
            + ".LBB0_1:\n"
            + "\ts_mov_b64 s[14:15], s[40:41]\n"
            + _event("s[16:17]", "")  # the pop, its word s14 <- s40 <- s30
            + "\ts_endpgm\n"
        )

    r = analyze_text(copied("\ts_brev_b32 s30, 64\n"))
    assert [(x.event_id, x.begin_line, x.end_line) for x in r.kernels[0].ktrace_ranges] == [
        (5, 9, 18)
    ]
    assert not any("ktrace" in n for n in r.notes)
    r = analyze_text(copied("\ts_load_dword s30, s[0:1], 0x0\n"))
    assert r.kernels[0].ktrace_ranges == []
    assert any("its event word is not a constant" in n for n in r.notes)
    assert any("ktrace range #5 opened at line 9 never closes" in n for n in r.notes)


def test_an_event_word_saved_and_restored_around_a_loop_is_read() -> None:
    """LLVM keeps a push's word live across a loop, saving it to another pair while the
    loop's own records use the register and restoring it before the back edge (the K1's
    ktrace build, gfx942 1 x 4): the walk back comes round to itself, which adds nothing,
    so the word that enters the loop is read; a restore from a pair that holds another
    constant is noted."""

    def looped(restore: str) -> str:
        return (
            HEAD
            + "\ts_mov_b32 s14, 0x1000005\n"  # push of event 5, set before the loop
            + "\ts_mov_b32 s30, 0x1000006\n"
            + ".LBB0_1:\n"
            + _event("s[16:17]", "")  # the loop's push of event 5
            + "\ts_mov_b64 s[40:41], s[14:15]\n"  # saved
            + _event("s[16:17]", "\ts_brev_b32 s14, 64\n")  # its pop
            + f"\ts_mov_b64 s[14:15], {restore}\n"
            + "\ts_cbranch_scc1 .LBB0_1\n"
            + "\ts_endpgm\n"
        )

    r = analyze_text(looped("s[40:41]"))
    assert [x.event_id for x in r.kernels[0].ktrace_ranges] == [5]
    assert not any("ktrace" in n for n in r.notes)
    r = analyze_text(looped("s[30:31]"))  # event 6's word comes round the back edge
    assert r.kernels[0].ktrace_ranges == []
    assert any("its event word is not a constant" in n for n in r.notes)


def test_a_range_left_open_is_reported() -> None:
    """A push whose pop is on no path (every record read) is a range that never closes:
    noted, with the line it opened at; its pair of the same id still closes."""
    text = (
        HEAD
        + _event("s[16:17]", "\ts_mov_b32 s14, 0x1000005\n")  # push of event 5
        + _event("s[16:17]", "\ts_mov_b32 s14, 0x1000006\n")  # push of event 6
        + _event("s[16:17]", "\ts_brev_b32 s14, 64\n")  # pop (of 6)
        + "\ts_endpgm\n"
    )
    r = analyze_text(text)
    assert [x.event_id for x in r.kernels[0].ktrace_ranges] == [6]
    assert [n for n in r.notes if "ktrace" in n] == [
        "k: ktrace range #5 opened at line 9 never closes"
    ]


def test_a_start_pairs_with_the_stop_of_its_id() -> None:
    text = (
        HEAD
        + _event("s[16:17]", "\ts_mov_b32 s14, 0x3000005\n")  # start of event 5
        + _event("s[16:17]", "\ts_mov_b32 s14, 0x1000006\n")  # push of event 6
        + "\tbuffer_load_dword v1, off, s[8:11], 0\n"
        + _event("s[16:17]", "\ts_brev_b32 s14, 64\n")  # pop (of 6)
        + _event("s[16:17]", "\ts_mov_b32 s14, 0x4000005\n")  # stop of event 5
        + "\ts_endpgm\n"
    )
    r = analyze_text(text, ktrace_names={"outer": 5})
    assert [(x.label, x.event_id) for x in r.kernels[0].ktrace_ranges] == [
        ('"outer"', 5),
        ("#6", 6),
    ]


def test_a_bad_name_table_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from kda_sim.cli import main

    src = KTRACE / "gfx950" / "buffer_sc0_sc1_sleep_ktrace.s"
    isa = tmp_path / src.name
    isa.write_text(src.read_text())
    Path(f"{isa}.ktrace.json").write_text('{"consumer.poll": "two"}')
    assert main(["isa", str(isa)]) == 2
    assert "ktrace.json" in capsys.readouterr().err


def test_ktrace_names_takes_a_table_from_anywhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A copy of the ISA without its table names ranges by id; ``--ktrace-names`` gives
    the table from elsewhere, and a missing one is exit 2 naming it."""
    from kda_sim.cli import main

    src = KTRACE / "gfx950" / "buffer_sc0_sc1_sleep_ktrace.s"
    isa = tmp_path / src.name
    isa.write_text(src.read_text())
    main(["isa", str(isa)])
    bare = capsys.readouterr().out
    assert "consumer.poll" not in bare and 'in ktrace range "#' not in bare
    assert "in ktrace range #" in bare
    main(["isa", str(isa), "--ktrace-names", f"{src}.ktrace.json"])
    named = capsys.readouterr().out
    assert 'in ktrace range "consumer.poll"' in named
    assert main(["isa", str(isa), "--ktrace-names", str(tmp_path / "none.json")]) == 2
    assert "no such ktrace name table" in capsys.readouterr().err
