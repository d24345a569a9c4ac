"""The Triton K1 (NVIDIA; written for the H200). Importing this package imports neither
torch nor Triton."""
