"""What a bug of the corpus is: the thread it comes from, the GPU it hung on, and the two
``kda-sim check`` runs that show it and its fix (the command lines are data; what they
report is the check's own)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BugCase:
    kernel: str  # the registered kernel name (--kernel)
    project: str  # owner/name on GitHub
    threads: tuple[str, ...]  # the issue and pull-request URLs it was described from
    gpu: str  # the bundled GPU profile of the report (--gpu)
    category: str  # the finding's tag in the report: deadlock, stale, aba
    culprit: str  # what the finding names: the word or grid the waiters wait on
    sequence: str = ""  # the host sequence that shows it ("" one launch)
    args: tuple[str, ...] = ()  # the kernel's flags for the bug (beyond its defaults)
    fix_args: tuple[str, ...] = ()  # the kernel's flags for the fix, after ``args``
    fix_sequence: str = ""  # the host sequence of the fix, where the fix is the host's

    def argv(self, fixed: bool) -> list[str]:
        """The ``kda-sim check`` arguments of the buggy run or of its fix."""
        seq = (self.fix_sequence or self.sequence) if fixed else self.sequence
        out = ["check", "--kernel", self.kernel, "--gpu", self.gpu]
        out += [*self.args, *(self.fix_args if fixed else ())]
        return out + (["--sequence", seq] if seq else [])
