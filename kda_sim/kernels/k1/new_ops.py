"""K1's op constructors without their dataclass's ``__init__`` (``ops.positional`` says
why): every builder of K1's programs makes thousands of ops a launch, and a sweep builds
every shape's. One constructor a class, made once here, shared by the builders."""

from __future__ import annotations

from kda_sim.protocol.ops import Begin, Compute, End, Load, Poll, Publish, Put, Store, positional

new_begin, new_end = positional(Begin), positional(End)
new_compute, new_load = positional(Compute), positional(Load)
new_poll, new_put = positional(Poll), positional(Put)
new_store, new_publish = positional(Store), positional(Publish)
