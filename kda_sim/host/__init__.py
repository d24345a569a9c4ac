"""Host sequences: several launches in a row, graph replays, host-side zeroing and two
grids sharing the GPU, each launch simulated from the memory the previous one left."""
