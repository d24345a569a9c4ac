"""Tag uniqueness across launches and steps: the device's tag arithmetic (``device``),
pluggable tag schemes with an analytic collision solver (``schemes``), the step model of
which pairs each launch of a step writes and polls, from the kernel's ``tag_model`` hook
(``footprint``), the analysis over every epoch (``analysis``), the tags each CTA's ops
compute read from the programs (``exprs``, ``programs``; one-CTA tag faults: ``faults``)
and an exhaustive search for scaled-down schemes (``brute``)."""
