"""Kernels: what a persistent kernel tells the generic layers (:mod:`.spec`), the
registry that finds them (:mod:`.registry`), K1 (:mod:`.k1`) and the examples."""
