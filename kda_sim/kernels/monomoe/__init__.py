"""A ticket-queue MoE layer launch after vLLM's Kimi-K3 mono MoE design
(``vllm/models/kimi_k3/amd/mono/README.md`` in vllm-project/vllm): routing, the shared
expert and the routed experts' two GEMMs as items of one global ticket queue.

:mod:`.config` holds the sizes, :mod:`.protocol` the items and their waits,
:mod:`.spec` the kernel object the registry finds as ``monomoe``.
"""
