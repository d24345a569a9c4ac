"""Read a GPU kernel's final AMDGPU ISA and say which polls wait behind which loads.

Written by hand, as small modules (:mod:`parser`, :mod:`memops`, :mod:`cfg`,
:mod:`conds`, :mod:`waitcnt`, :mod:`lds`, :mod:`provenance`, :mod:`polls`, :mod:`report`): no
installable library parses AMDGPU assembly into control flow with the memory
counters' meaning (the graph algorithms over the blocks are networkx's).
LLVM's own MC layer (``llvm-mc``, ``llvm-objdump``) decodes and prints instructions
but builds no CFG and knows nothing of ``vmcnt`` retiring loads in order; the Python
disassemblers on PyPI (capstone and friends) do not decode AMDGPU at all. What we
need is narrow: basic blocks, loops, and a queue of in-flight vector-memory ops
(the hardware retires them in issue order, so ``s_waitcnt vmcnt(N)`` keeps the N
youngest) on each path, which is a few hundred lines we can test against kernels we
compile.

Entry points: :func:`kda_sim.isa.analyze.analyze_path` and the ``kda-sim isa`` command.
"""

from kda_sim.isa.analyze import analyze_path, analyze_text
from kda_sim.isa.report import Finding, IsaReport

__all__ = ["Finding", "IsaReport", "analyze_path", "analyze_text"]
