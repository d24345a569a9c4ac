"""K1's kda tasks: task i = (req 12 + h) 8 + ch, run by CTA (i + kda0) mod 256 after
its role work. Stages and hand-offs as the seed's: stage (loads needing no hand-off),
conv (PROJ -> QK), gates (PROJ f_a, QK, PROJ beta), recur (-> ONRM), norm (ONRM +
PROJ g2 -> core_out). on_w is loaded after norm's poll, the seed's order, or with
``LaunchConfig.onw_first`` in stage (the protocol model's ``kda_program``).

Our buffers (simpler than the seed's, same traffic shape): ``conv_state`` f32
[R, 3 PROJ, CONV_W - 1] (the window, one slot a request), ``rstate`` f32
[R, NH, HD, HD] (the final state is written back), ``core_out`` f32 [S, PROJ]. The
gate is ``-exp(a_log) sigmoid(f_b f_a + dt_bias)`` (the seed's lower-bound gate
form; its f_b product is MFMA, ours FMA).
"""

from __future__ import annotations

import flydsl.expr as fx

from kda_kernel.flydsl import dsl
from kda_kernel.flydsl import k1_index as idx
from kda_kernel.flydsl.k1_ctx import Ctx
from kda_kernel.flydsl.k1_math import (
    LOG2E,
    bf_hi,
    bf_lo,
    bits_of,
    butterfly,
    exp2,
    f32_of,
    imin,
    rsq,
    sigmoid,
)
from kda_sim.kernels.k1.constants import (
    CONV_W,
    HD,
    NH,
    NVCH,
    PROJ,
    THREADS,
    VCH,
    WAVES,
)
from kda_sim.kernels.k1.regions import Region

ONORM_EPS = 1e-6


class Task:
    """Trace-time values of one kda task (dynamic task index)."""

    def __init__(self, c: Ctx, i: object) -> None:
        self.i = dsl.i32(i)
        self.req, self.h, self.ch = idx.task_coords(self.i)
        ct = imin(c.tid, 3 * VCH - 1)
        self.part = ct // VCH  # 0 q, 1 k, 2 v
        self.chan = idx.conv_chan(self.h, self.ch, ct)
        self.v_row = c.tid // 32
        self.k0 = (c.tid % 32) * 4


def kda_stage(c: Ctx, k: Task) -> dict[str, object]:
    """The task's inputs that need no hand-off, issued before its first poll."""
    st: dict[str, object] = {}
    st["cw"] = dsl.load(c.rs["conv_w"], k.chan * CONV_W, width=4)
    win0 = (k.req * 3 * PROJ + k.chan) * (CONV_W - 1)
    st["win"] = [f32_of(dsl.load(c.rs["conv_state"], win0 + j)) for j in range(CONV_W - 1)]
    row = ((k.req * NH + k.h) * HD + k.ch * VCH + k.v_row) * HD + k.k0
    st["row"] = row
    st["st"] = dsl.load(c.rs["rstate"], row, width=4)
    fr = k.h * HD + c.wave * 16 + c.lane % 16
    fb = (fr * HD + (c.lane // 16) * 32) // 2
    st["fb"] = [dsl.load(c.rs["w_fb"], fb + 4 * q, width=4) for q in range(4)]
    st["aa"] = exp2(f32_of(dsl.load(c.rs["a_log"], k.h)) * fx.Float32(LOG2E))
    st["dtb"] = f32_of(dsl.load(c.rs["dt_bias"], fr))
    # LaunchConfig.onw_first: asked with the task's other loads, so that its round trip is
    # not between the ONRM+PROJ poll and the core_out store (the norm is its only use); one
    # VGPR a lane held from here to k.norm of the same task (a loop iteration's value)
    if c.cfg.onw_first:
        st["on_w"] = ld_on_w(c, norm_col(c, k))
    return st


def norm_col(c: Ctx, k: Task) -> object:
    """The column of the task's VCH this thread normalises (and whose on_w it needs)."""
    return k.ch * VCH + c.tid % VCH


def ld_on_w(c: Ctx, vr: object) -> fx.Float32:
    """on_w of column ``vr``: one dword a lane (our on_w is f32, the seed's bf16)."""
    return f32_of(dsl.load(c.rs["on_w"], vr))


def kda_conv(c: Ctx, k: Task, st: dict[str, object]) -> None:
    L = c.cfg.L
    vloc = c.lds["vloc"]

    def owned() -> None:
        xs = c.poll(
            "PROJ", [c.cell(Region.PROJ, idx.proj(k.req * L + j, k.chan)) for j in range(L)]
        )
        seq = list(st["win"]) + [f32_of(x) for x in xs]  # type: ignore[arg-type]
        cw = [f32_of(dsl.element(st["cw"], q)) for q in range(CONV_W)]
        outs = []
        for j in range(L):
            acc = fx.Float32(0.0)
            for q in range(CONV_W):
                acc = acc + cw[q] * seq[j + q]
            outs.append(acc * sigmoid(acc))
        win0 = (k.req * 3 * PROJ + k.chan) * (CONV_W - 1)
        for j in range(CONV_W - 1):
            dsl.store(bits_of(seq[L + j]), c.rs["conv_state"], win0 + j)
        lane = k.ch * VCH + c.tid % VCH
        items = [
            (idx.qk(k.req, k.h, j, imin(k.part, 1), lane, L), bits_of(outs[j])) for j in range(L)
        ]
        c.put(Region.QK, items, k.part < 2)
        for j in range(L):
            dsl.when(k.part == 2, lambda j=j: fx.ptr_store(outs[j], vloc + (j * VCH + c.tid % VCH)))

    dsl.when(c.tid < 3 * VCH, owned)
    dsl.barrier()


def kda_gates(c: Ctx, k: Task, st: dict[str, object]) -> None:
    L = c.cfg.L
    fa_l, qkl, beta, decay = c.lds["fa"], c.lds["qkl"], c.lds["beta"], c.lds["decay"]
    n_fa = L * HD
    n = n_fa + L * 2 * HD
    per = (n + THREADS - 1) // THREADS
    es = [imin(c.tid + THREADS * i, n - 1) for i in range(per)]
    fa_cells = [c.cell(Region.PROJ, idx.gates_fa(k.req, e, L)) for e in es]
    qk_cells = [c.cell(Region.QK, idx.gates_qk(k.req, k.h, e, L)) for e in es]
    got_fa = c.poll("PROJ", fa_cells)
    got_qk = c.poll("QK", qk_cells)
    for i in range(per):
        e, at = es[i], c.tid + THREADS * i
        dsl.when(at < n_fa, lambda e=e, v=got_fa[i]: fx.ptr_store(f32_of(v), fa_l + e))
        dsl.when(
            (at >= n_fa) & (at < n),
            lambda e=e, v=got_qk[i]: fx.ptr_store(f32_of(v), qkl + (e - n_fa)),
        )

    def beta_row() -> None:
        cell = c.cell(Region.PROJ, idx.beta(k.req, k.h, imin(c.tid, L - 1), L))
        b = c.poll("PROJ", [cell])[0]
        fx.ptr_store(sigmoid(f32_of(b)), beta + c.tid)

    dsl.when(c.tid < L, beta_row)
    dsl.barrier()
    # g1 = f_b f_a: a lane's 32 K of its f_b row, the 4 lane groups summed
    fb = [
        f
        for vec in st["fb"]
        for j in range(4)
        for f in (bf_lo(dsl.element(vec, j)), bf_hi(dsl.element(vec, j)))
    ]  # type: ignore[attr-defined]
    kb = (c.lane // 16) * 32
    rr = c.wave * 16 + c.lane % 16
    for j in fx.range_constexpr(L):
        g = fx.Float32(0.0)
        for e in range(32):
            g = g + fb[e] * fx.ptr_load(fa_l + (j * HD + kb + e))
        g = butterfly(g, (16, 32))
        gate = -st["aa"] * sigmoid(g + st["dtb"])  # type: ignore[operator]
        dsl.when(
            c.lane < 16,
            lambda j=j, gate=gate: fx.ptr_store(
                exp2(gate * fx.Float32(LOG2E)), decay + (j * HD + rr)
            ),
        )
    # l2norm: q / k row r (2 L rows of 128) on wave r % 8; q also scaled
    for r2 in fx.range_constexpr((2 * L + WAVES - 1) // WAVES):
        row = imin(c.wave + WAVES * r2, 2 * L - 1)
        x0 = fx.ptr_load(qkl + (row * HD + c.lane))
        x1 = fx.ptr_load(qkl + (row * HD + 64 + c.lane))
        sc = rsq(butterfly(x0 * x0 + x1 * x1, (32, 16, 8, 4, 2, 1)) + fx.Float32(1e-6))
        sc = (row % 2 == 0).select(sc * fx.Float32(HD**-0.5), sc)

        def keep(
            row: object = row, x0: fx.Float32 = x0, x1: fx.Float32 = x1, sc: fx.Float32 = sc
        ) -> None:
            fx.ptr_store(x0 * sc, qkl + (dsl.i32(row) * HD + c.lane))
            fx.ptr_store(x1 * sc, qkl + (dsl.i32(row) * HD + 64 + c.lane))

        dsl.when((c.wave + WAVES * r2) < 2 * L, keep)
    dsl.barrier()


def kda_recur(c: Ctx, k: Task, st: dict[str, object]) -> None:
    L = c.cfg.L
    qkl, decay, beta, vloc, ol = (
        c.lds["qkl"],
        c.lds["decay"],
        c.lds["beta"],
        c.lds["vloc"],
        c.lds["ol"],
    )
    s = [f32_of(dsl.element(st["st"], e)) for e in range(4)]
    for j in fx.range_constexpr(L):
        qv = [fx.ptr_load(qkl + ((2 * j) * HD + k.k0 + e)) for e in range(4)]
        kv = [fx.ptr_load(qkl + ((2 * j + 1) * HD + k.k0 + e)) for e in range(4)]
        dk = [fx.ptr_load(decay + (j * HD + k.k0 + e)) for e in range(4)]
        s = [s[e] * dk[e] for e in range(4)]
        p = butterfly(s[0] * kv[0] + s[1] * kv[1] + s[2] * kv[2] + s[3] * kv[3])
        vn = (fx.ptr_load(vloc + (j * VCH + k.v_row)) - p) * fx.ptr_load(beta + j)
        s = [s[e] + vn * kv[e] for e in range(4)]
        o = butterfly(s[0] * qv[0] + s[1] * qv[1] + s[2] * qv[2] + s[3] * qv[3])
        dsl.when(c.lane % 32 == 0, lambda j=j, o=o: fx.ptr_store(o, ol + (j * VCH + k.v_row)))
    words = fx.Vector.from_elements([bits_of(x) for x in s], fx.Int32)
    dsl.store(words, c.rs["rstate"], st["row"])
    dsl.barrier()
    t = imin(c.tid, L - 1)
    ss = fx.Float32(0.0)
    for e in fx.range_constexpr(VCH):
        x = fx.ptr_load(ol + (t * VCH + e))
        ss = ss + x * x
    c.put(Region.ONRM, [(idx.onrm(k.req, k.h, t, k.ch, L), bits_of(ss))], c.tid < L)
    dsl.barrier()


def kda_norm(c: Ctx, k: Task, st: dict[str, object]) -> None:
    """ONRM + PROJ g2 -> core_out. on_w: as k.stage loaded it (``onw_first``); without,
    it is loaded after the ONRM+PROJ poll (the seed's order)."""
    L = c.cfg.L
    ol = c.lds["ol"]
    j, e = imin(c.tid, L * VCH - 1) // VCH, c.tid % VCH
    vr = norm_col(c, k)

    def rows() -> None:
        cells = [c.cell(Region.ONRM, idx.onrm(k.req, k.h, j, q, L)) for q in range(NVCH)]
        cells.append(c.cell(Region.PROJ, idx.g2(k.req, k.h, j, vr, L)))
        got = c.poll("ONRM+PROJ", cells)
        ss = fx.Float32(0.0)
        for v in got[:NVCH]:
            ss = ss + f32_of(v)
        r = rsq(ss * fx.Float32(1.0 / HD) + fx.Float32(ONORM_EPS))
        on_w = st["on_w"] if "on_w" in st else ld_on_w(c, vr)
        y = fx.ptr_load(ol + (j * VCH + e)) * r * on_w * sigmoid(f32_of(got[NVCH]))
        dsl.store(bits_of(y), c.rs["core_out"], (k.req * L + j) * PROJ + k.h * HD + vr)

    dsl.when(c.tid < L * VCH, rows)
    dsl.barrier()


def kda_task(c: Ctx, i: object, n: object) -> None:
    """Task ``i``, the CTA's ``n``-th: every stage stamps its own column and, as the
    twin does, the last-task column."""
    k = Task(c, i)
    base = c.layout.task_base(0) + dsl.i32(n) * 5

    def stamp(p: int) -> None:
        c.stamp(base + p)
        c.stamp(c.layout.last_task(("k.stage", "k.conv", "k.gates", "k.recur", "k.norm")[p]))

    with c.stage("k.stage"):
        st = kda_stage(c, k)
    stamp(0)
    with c.stage("k.conv"):
        kda_conv(c, k, st)
    stamp(1)
    with c.stage("k.gates"):
        kda_gates(c, k, st)
    stamp(2)
    with c.stage("k.recur"):
        kda_recur(c, k, st)
    stamp(3)
    with c.stage("k.norm"):
        kda_norm(c, k, st)
    stamp(4)
