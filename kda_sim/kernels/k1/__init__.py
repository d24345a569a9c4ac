"""K1 ``kda_pre``: the fused Kimi-K3 KDA layer, 256 CTAs of three roles handing data to
each other through tagged mailboxes. Its spec is :data:`kda_sim.kernels.k1.spec.KERNEL`."""
