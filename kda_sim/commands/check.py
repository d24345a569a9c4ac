"""``kda-sim check``: every property of one launch, or (``--tags``) tag uniqueness across
the launches and steps of a run. Exit 0 if every property holds, 1 with the
counterexample if one fails, 2 for invalid input."""

from __future__ import annotations

import argparse
import json
from typing import Any

from kda_sim.checks.dataflow.faults import INJECTORS, Fault, FaultKind
from kda_sim.checks.launch_check import (
    LaunchReport,
    check_launch,
    findings_text,
    launch_json,
    launch_text,
)
from kda_sim.checks.mutations import Case, caught_text, generic_fault, sites_text
from kda_sim.checks.tags.analysis import Policy, TagVerdict, analyse
from kda_sim.checks.tags.device import in_range
from kda_sim.checks.tags.footprint import Layout, tag_model
from kda_sim.checks.tags.schemes import FAULTS, SCHEMES, check_slot_count, make_scheme
from kda_sim.cli import COMMANDS
from kda_sim.commands.common import (
    IDLE_CORES,
    JITTER,
    add_jobs_flag,
    add_kernel_flag,
    add_launch_flags,
    gpu_profile,
    int_type,
    jobs_of,
    k1_flags_given,
    kernel_config,
    launch_config,
    launch_values,
    other_kernel,
)
from kda_sim.errors import InvalidInput
from kda_sim.host.command import check_sequence_command
from kda_sim.kernels.registry import DEFAULT_KERNEL, get
from kda_sim.kernels.spec import hook
from kda_sim.machine.profile import GpuProfile
from kda_sim.machine.residency import check_occupancy
from kda_sim.parallel import Workers
from kda_sim.protocol.program import Launch
from kda_sim.text import plain


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "check",
        help=COMMANDS["check"],
        description=plain(__doc__),
    )
    add_kernel_flag(p)
    add_launch_flags(p)
    # None marks a K1 flag the user did not give: another kernel refuses them
    p.set_defaults(R=None, L=None, nb=None, kda0=None)
    p.add_argument(
        "--seeds", type=int_type(0, 1000), default=3, help="jittered engine runs (default 3)"
    )
    p.add_argument("--jitter", type=JITTER, default=0.9, help="their jitter (default 0.9)")
    p.add_argument("--json", action="store_true", help="print a machine-readable report")
    # the idle cores by default: a worker takes a third off a check on an idle machine
    # and makes it slower on a busy one (bench/README.md, "A check's engine runs on
    # workers"); the report is the same either way
    add_jobs_flag(p, "the engine runs of the deadlock and visibility checks", IDLE_CORES)
    p.add_argument(
        "--mutant",
        default=None,
        metavar="NAME[@SITE]",
        help="check a fault applied to this launch: a generic data-flow fault of any kernel "
        f"({', '.join(FaultKind)}) at a site CTA[/STAGE][#N] (default: the first), or a "
        "named fault of the kernel's catalogue; 'list' lists both with the sites",
    )
    p.add_argument(
        "--sequence",
        default=None,
        metavar="SPEC",
        help="check a host sequence of launches, replays and zeroing, e.g. 'launch; replay*3' "
        "or 'zero=SEM; launch; replay*2' (docs/adding-a-kernel.md, Host sequences)",
    )
    # the defaults of the tag's widths are the kernel's (its tag_model hook): the help
    # says the default kernel's
    d = tag_model(get(DEFAULT_KERNEL))
    t = p.add_argument_group("tags (--tags)")
    t.add_argument("--tags", action="store_true", help="check tag uniqueness across steps")
    t.add_argument(
        "--policy",
        choices=[x.value for x in Policy],
        default=Policy.NEVER_ZEROED.value,
        help="whether the mailboxes are zeroed before each step (default never-zeroed)",
    )
    t.add_argument("--shapes", default=None, help="step shapes R x L, e.g. 8x1,1x1")
    slots = t.add_mutually_exclusive_group()
    slots.add_argument("--slots", type=int, default=None, help="launches a step (one nb: --nb)")
    slots.add_argument("--nb-per-slot", default=None, help="nb of each slot, e.g. 1,1,2,8")
    t.add_argument(
        "--tag-slots",
        type=int,
        default=None,
        help=f"launch slots a step in the tag: epoch * slots + slot + 1 (default {d.tag_slots})",
    )
    t.add_argument(
        "--epoch-bits",
        type=int,
        default=None,
        help=f"bits of the step counter the tag keeps (epoch %% 2^bits, default {d.epoch_bits})",
    )
    t.add_argument("--tag-bits", type=int, default=None, help=f"int width ({d.tag_bits})")
    t.add_argument(
        "--scheme",
        choices=SCHEMES,
        default="step_tag",
        help="how a launch's tag is made: step_tag (epoch and slot), layer+1 (slot only), "
        "counter64 (a 64-bit step counter, no wrap); default step_tag",
    )
    t.add_argument(
        "--fault",
        choices=FAULTS,
        action="append",
        default=[],
        help="a bug to inject, repeatable: frozen-epoch (the epoch never advances: frozen at "
        "--epoch0, or, without it, at every value it can take), drop-slot (tags without the "
        "slot term); a fault a scheme cannot have is refused",
    )
    t.add_argument(
        "--layout",
        choices=[x.value for x in Layout],
        default=Layout.FIXED.value,
        help="scratch layout: fixed (each region at the same address for every shape) or "
        "packed (regions packed to each launch's extents); default fixed",
    )
    t.add_argument(
        "--epoch0",
        type=int,
        default=None,
        help="the epoch counter's first value (default 0); with --fault frozen-epoch the "
        "value it is frozen at (default: every value)",
    )
    p.set_defaults(run=run)


K1_DEFAULTS = {"R": 2, "L": 2, "nb": 8, "kda0": 0}


def run(args: argparse.Namespace) -> int:
    spec = other_kernel(args)
    if spec is None:
        for k, v in K1_DEFAULTS.items():
            if getattr(args, k) is None:
                setattr(args, k, v)
        if args.tags:
            # the flags as given, unvalidated: each launch of the step is validated with
            # its own shape and nb (a flag the step replaces is not checked)
            k1 = get(DEFAULT_KERNEL)
            return run_tags(k1, k1.config_from_dict(launch_values(args)), args)
        if args.sequence is not None:
            return _sequence(get(DEFAULT_KERNEL), launch_config(args), args)
        return run_launch(get(DEFAULT_KERNEL), launch_config(args), args)
    given = k1_flags_given(args)
    if given:
        raise InvalidInput(f"{', '.join(given)}: K1's, not {spec.name}'s flags", what="kernel")
    if args.tags:
        tag_model(spec)  # refused before its flags are read: the kernel has no tag check
    cfg = kernel_config(spec, getattr(args, "kernel_args", []))
    if args.tags:
        return run_tags(spec, cfg, args)
    if args.sequence is not None:
        return _sequence(spec, cfg, args)
    return run_launch(spec, cfg, args)


def _sequence(spec: Any, cfg: Any, args: argparse.Namespace) -> int:
    if args.mutant is not None:
        raise InvalidInput("--mutant and --sequence: one at a time", what="sequence")
    prof = gpu_profile(args)
    check_occupancy(cfg, prof, args.occupancy)
    return check_sequence_command(
        spec, cfg, prof, args.sequence, occupancy=args.occupancy, as_json=args.json
    )


# -- one launch, any kernel ------------------------------------------------------------------
def launch_report(
    cfg: Any,
    prof: GpuProfile,
    args: argparse.Namespace,
    *,
    occupancy: int | None,
    launch: Launch | None = None,
    workers: Workers | None = None,
) -> LaunchReport:
    """The check of one launch with the flags' engine runs (the report's input; the
    app's too); ``workers``: the processes its engine runs are shared among (None: this
    one, whatever ``--jobs`` says: the app's runs stay in its process)."""
    if args.seeds < 0:
        raise InvalidInput("--seeds must be >= 0", what="seeds")
    if not 0 <= args.jitter < 1:
        raise InvalidInput(f"--jitter {args.jitter}: must be in [0, 1)", what="jitter")
    return check_launch(
        cfg,
        prof,
        occupancy=occupancy,
        launch=launch,
        seeds=tuple(range(1, args.seeds + 1)),
        jitter=args.jitter,
        workers=workers,
    )


def _mutant_case(spec: Any, cfg: Any, prof: GpuProfile, text: str) -> tuple[Case, str]:
    """The case ``--mutant`` names and its header line: a generic fault at a site of the
    launch, or one of the kernel's catalogue."""
    name, at, where = text.partition("@")
    fixed = hook(spec, "mutations") or {}
    if name in fixed and not at:  # a catalogue's name first (K1's put-before-poll)
        m = fixed[name]
        case = m.apply(cfg, prof)
        return case, f"mutant {name}: {m.description}" + _culprit(case.fault)
    if name in fixed and name not in set(FaultKind):
        raise InvalidInput(
            f"--mutant {text}: {name} is a fault of {spec.name}'s catalogue, at its own site; "
            f"a site is given to a generic fault ({', '.join(FaultKind)})",
            what="mutant",
        )
    if name not in set(FaultKind):
        raise InvalidInput(
            f"--mutant {name}: not a mutation of {spec.name}"
            + (f" ({', '.join(fixed)})" if fixed else " (it has none)")
            + f" nor a generic fault ({', '.join(FaultKind)}); --mutant list shows them "
            "with their sites",
            what="mutant",
        )
    site, fault = generic_fault(FaultKind(name), spec.build(cfg), where, text)
    head = f"mutant {name}@{site.where}: {INJECTORS[fault.kind].description}"
    return Case(cfg, prof, launch=fault.launch, fault=fault), head + _culprit(fault)


def _culprit(fault: Fault | None) -> str:
    if fault is None:
        return ""
    ops = f"op {fault.ops.start}" + (f"..{fault.ops.stop - 1}" if len(fault.ops) > 1 else "")
    return f" (CTA {fault.cta}, {ops}; caught as [{fault.category}])"


def run_launch(spec: Any, cfg: Any, args: argparse.Namespace) -> int:
    prof = gpu_profile(args)
    check_occupancy(cfg, prof, args.occupancy)
    occupancy, launch, fault = args.occupancy, None, None
    if args.mutant == "list":
        print(sites_text(spec.build(cfg), dict(hook(spec, "mutations") or {})))
        return 0
    if args.mutant is not None:
        case, head = _mutant_case(spec, cfg, prof, args.mutant)
        if case.tags is not None:
            t = case.tags
            model = tag_model(spec).step_model(t.shapes, t.nb_per_slot, Layout.FIXED, case.cfg)
            v = analyse(model, t.scheme, t.policy)
            print(head)
            for f in v.findings:
                print(f.text())
            return 0 if v.safe else 1
        cfg, prof, occupancy, launch = case.cfg, case.prof, case.occupancy, case.launch
        fault = case.fault
        if not args.json:
            print(head)
    with Workers(jobs_of(args), desc="check") as workers:
        rep = launch_report(cfg, prof, args, occupancy=occupancy, launch=launch, workers=workers)
    caught = caught_text(fault, rep.findings) if fault is not None else None
    if args.json:
        out = launch_json(rep)
        if caught is not None:
            out["mutant"] = {"name": args.mutant, "caught": caught[0], "text": caught[1]}
        print(json.dumps(out, indent=2, default=str))
    else:
        print(launch_text(rep))
        if caught is not None:
            print(caught[1])
    return 0 if rep.ok else 1


# -- tags ------------------------------------------------------------------------------------------
def _ints(text: str, what: str) -> tuple[int, ...]:
    try:
        return tuple(int(x) for x in text.split(","))
    except ValueError as e:
        raise InvalidInput(f"{text!r}: a comma-separated list of integers", what=what) from e


def _given(value: int | None, default: int) -> int:
    return default if value is None else value


def run_tags(spec: Any, cfg: Any, args: argparse.Namespace) -> int:
    """Tag uniqueness over steps of launches of ``spec``: each is ``cfg`` with a step's
    shape and its slot's nb (``spec``'s ``tag_model`` says which pairs it writes and polls)."""
    tm = tag_model(spec)
    shapes = tm.parse_shapes(args.shapes) if args.shapes else (tm.shape_of(cfg),)
    if args.nb_per_slot is not None:
        nbs = _ints(args.nb_per_slot, "nb-per-slot")
        given = f"--nb-per-slot {args.nb_per_slot}"
    else:
        n = 1 if args.slots is None else args.slots
        if n < 1:
            raise InvalidInput(f"--slots {n}: at least 1", what="slots")
        nbs = (tm.nb_of(cfg),) * n
        given = f"--slots {n}"
    tag_slots = _given(args.tag_slots, tm.tag_slots)
    tag_bits = _given(args.tag_bits, tm.tag_bits)
    epoch_bits = _given(args.epoch_bits, tm.epoch_bits)
    if args.scheme not in tm.schemes:
        raise InvalidInput(
            f"--scheme {args.scheme}: not a tag scheme of {spec.name} ({', '.join(tm.schemes)})",
            what="scheme",
        )
    if tag_slots < 1:
        raise InvalidInput("--tag-slots must be >= 1", what="tag-slots")
    if not 1 <= tag_bits <= 64:
        raise InvalidInput("--tag-bits must be in 1..64", what="tag-bits")
    if not 1 <= epoch_bits < tag_bits:
        raise InvalidInput(
            f"--epoch-bits {epoch_bits}: must be in 1..{tag_bits - 1}", what="epoch-bits"
        )
    scheme = make_scheme(
        args.scheme,
        tag_slots=tag_slots,
        epoch_bits=epoch_bits,
        bits=tag_bits,
        drop_slot="drop-slot" in args.fault,
        frozen="frozen-epoch" in args.fault,
        captured=args.epoch0,
    )
    check_slot_count(len(nbs), scheme, given=given)
    if args.epoch0 is not None and not in_range(args.epoch0, scheme.bits):
        lo, hi = -(1 << (scheme.bits - 1)), (1 << (scheme.bits - 1)) - 1
        raise InvalidInput(
            f"--epoch0 {args.epoch0}: the {scheme.bits}-bit counter takes {lo}..{hi}",
            what="epoch0",
        )
    # the launches' configuration but their shape and nb says who polls a pair (K1: kda0
    # places the kda tasks, gate_local moves the gate's polls, the schedules take tickets)
    model = tm.step_model(shapes, nbs, Layout(args.layout), cfg)
    epoch0 = 0 if args.epoch0 is None else args.epoch0
    v = analyse(model, scheme, Policy(args.policy), epoch0=epoch0)
    if args.json:
        print(json.dumps(tags_json(v, args), indent=2))
    else:
        print(tags_text(v, args))
    return 0 if v.safe else 1


def tags_json(v: TagVerdict, args: argparse.Namespace) -> dict[str, Any]:
    return {
        "safe": v.safe,
        "scheme": v.scheme,
        "policy": v.policy.value,
        "layout": args.layout,
        "shapes": list(v.shapes),
        "nb_per_slot": list(v.nb),
        "epochs": v.epochs,
        "scenarios": len(v.scenarios),
        "findings": [f.to_dict() for f in v.findings],
    }


def tags_text(v: TagVerdict, args: argparse.Namespace) -> str:
    nbs = v.nb
    slots = (
        f"{len(nbs)} slots of nb {nbs[0]}"
        if len(set(nbs)) == 1
        else f"{len(nbs)} slots, nb {','.join(map(str, nbs))}"
    )
    lines = [
        f"tags: {v.scheme}; {v.policy.value}; steps of shape {', '.join(v.shapes)} in any "
        f"order; {slots}; scratch layout {args.layout}",
        f"  analysed over {v.epochs}, no step walked",
    ]
    lines += findings_text(v.findings)
    lines.append(
        "SAFE: no poll can pass on a pair its own launch did not write" if v.safe else "UNSAFE"
    )
    return "\n".join(lines)
