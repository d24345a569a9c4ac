"""Our FlyDSL kernels, compiled compile-only (no ROCm GPU here): K1 ``kda_pre``
(:mod:`kernel.flydsl.k1`), the probes ``kda-sim isa`` is tested on
(:mod:`kernel.flydsl.probes`), the toolchain check (:mod:`kernel.flydsl.toolchain`,
installed by ``scripts/flydsl_env.sh``). Importing this package does not import FlyDSL."""
