"""The discrete-event engine: programs on a machine model -> a timeline."""

from kda_sim.engine.simulate import SimResult, simulate
from kda_sim.engine.world import StaleRead

__all__ = ["SimResult", "StaleRead", "simulate"]
