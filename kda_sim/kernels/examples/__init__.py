"""Small example kernels: each one file that defines ``KERNEL`` (docs and tests use them)."""
