"""Real persistent-kernel synchronization bugs from public projects, each one file that
defines ``KERNEL`` and the ``CASE`` that says how ``kda-sim check`` shows it and its fix
(the corpus: :mod:`kda_sim.kernels.bugs.corpus`; docs/bugs.md)."""
