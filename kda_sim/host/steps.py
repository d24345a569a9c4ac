"""The steps of a host sequence, as data (:mod:`kda_sim.host.spec_text` reads them from
text; :mod:`kda_sim.host.run` runs them)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LaunchStep:
    """A launch with a fresh epoch argument. ``zero``: regions the host zeroes right
    before it in the same stream (memset nodes a graph captures with the launch);
    ``overrides``: configuration fields this launch sets, as text (``grid=worker``)."""

    zero: tuple[str, ...] = ()
    overrides: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Zero:
    """The host zeroes regions, outside any captured graph."""

    regions: tuple[str, ...]


@dataclass(frozen=True)
class Replay:
    """The graph captured from the last launch step, replayed ``times`` times: its
    arguments (the epoch) frozen at capture unless ``update`` (the host updates the
    kernel node's parameters before each replay); its zeroing replayed with it."""

    times: int = 1
    update: bool = False


@dataclass(frozen=True)
class Together:
    """Grids launched on separate streams that overlap in time and share the GPU's slots
    and memory; blocks are dispatched grid by grid in the order written."""

    grids: tuple[LaunchStep, ...]


Step = LaunchStep | Zero | Replay | Together


@dataclass(frozen=True)
class HostSequence:
    steps: tuple[Step, ...]
    text: str = ""  # as the user wrote it
