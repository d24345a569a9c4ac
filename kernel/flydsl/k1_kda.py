"""K1's kda tasks: task i = (req 12 + h) 8 + ch, run by CTA (i + kda0) mod 256 after
its role work. Stages and hand-offs as the seed's: stage (loads needing no hand-off),
conv (PROJ -> QK), gates (PROJ f_a, QK, PROJ beta), recur (-> ONRM), norm (ONRM +
PROJ g2 -> core_out). on_w is loaded after norm's poll, the seed's order, or with
``LaunchConfig.onw_first`` in stage (the protocol model's ``kda_program``).

Numerics as the seed's and ``kernel/reference.py``'s: ``conv_state`` bf16
[slots, 3 PROJ, SL] (read at slot ``max(st_idx[req, 0], 0)`` from ``num_acc - 1``,
the updated window written to slot ``st_idx[req, 0]`` where it is > 0), ``rstate`` f32
[slots, NH, HD, HD] (read at slot ``st_idx[req, num_acc - 1]``; the state after token
j written to slot ``st_idx[req, j]`` where both are > 0; a dead request's outputs 0),
the gate ``lower_bound * sigmoid(exp(a_log) * (bf16(f_b f_a) + dt_bias))``, bf16
roundings (nearest even) of the conv output, g1 and the recurrence output, bf16
``on_w`` and ``core_out``. ``st_idx`` is read as a contiguous [R, L] int32 (the runner
passes ``st_idx[:, :L]``). The f_b product is FMA on bf16 operands (exact products,
f32 sums; the seed's is MFMA: only the summation order differs).
"""

from __future__ import annotations

import flydsl.expr as fx

from kda_kernel.flydsl import dsl
from kda_kernel.flydsl import k1_index as idx
from kda_kernel.flydsl.k1_ctx import Ctx
from kda_kernel.flydsl.k1_math import (
    LOG2E,
    bf16_bits,
    bf16r,
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
from kda_kernel.reference import L2_EPS, LOWER_BOUND, ONORM_EPS
from kda_sim.kernels.k1.constants import (
    CONV_W,
    HD,
    NVCH,
    THREADS,
    VCH,
    WAVES,
)
from kda_sim.kernels.k1.regions import Region


def ld_bf(rs: object, element: object) -> fx.Float32:
    """bf16 element ``element`` as an f32."""
    return f32_of(dsl.load_u16(rs, element) << 16)


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
        self.vr = self.ch * VCH + self.v_row  # the state row (a v column) of this thread


def kda_stage(c: Ctx, k: Task) -> dict[str, object]:
    """The task's inputs that need no hand-off, issued before its first poll: metadata,
    the owned channel's conv window and weights, the initial state rows, the f_b rows of
    this wave and the per-head constants (the seed's ``kda_stage``)."""
    L, sl = c.cfg.L, c.cfg.SL
    st: dict[str, object] = {}

    # every value a buffer offset or a branch is built on: wave-uniform
    def slot(j: object) -> fx.Int32:
        return dsl.uniform(dsl.load(c.rs["st_idx"], idx.st_idx_entry(k.req, j, L)))

    st["acc_idx"] = dsl.uniform(dsl.load(c.rs["num_acc"], k.req)) - 1
    st["slot_c"] = slot(0)
    st["slot0"] = slot(st["acc_idx"])
    st["slots"] = [slot(j) for j in range(L)]
    st["cw"] = dsl.load(c.rs["conv_w"], k.chan * CONV_W, width=4)
    co = idx.conv_entry(st["slot_c"], k.chan, sl)
    st["co"] = co
    st["win"] = [ld_bf(c.rs["conv_state"], co + st["acc_idx"] + j) for j in range(CONV_W - 1)]
    # the entries the updated window keeps (bf16 bits)
    st["old"] = [
        dsl.load_u16(c.rs["conv_state"], co + st["acc_idx"] + 1 + j) for j in range(sl - L)
    ]
    st["st"] = dsl.load(c.rs["rstate"], idx.state_entry(st["slot0"], k.h, k.vr, k.k0), width=4)
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
    """on_w (bf16) of column ``vr``: one 16-bit load a lane."""
    return ld_bf(c.rs["on_w"], vr)


def kda_conv(c: Ctx, k: Task, st: dict[str, object]) -> None:
    """Owned channels: the spec conv of the request's L tokens (bf16 silu out), the
    updated window to slot ``st_idx[req, 0]`` where it is > 0; q / k out through QK, v to
    LDS."""
    L, sl = c.cfg.L, c.cfg.SL
    vloc = c.lds["vloc"]

    def owned() -> None:
        xs = c.poll(
            "PROJ", [c.cell(Region.PROJ, idx.proj(k.req * L + j, k.chan)) for j in range(L)]
        )
        # PROJ values are bf16 held in f32 (the gemv rounds them): their top 16 bits
        new = list(st["old"]) + [dsl.i32(x) >> 16 for x in xs]  # type: ignore[arg-type]

        def write() -> None:
            for j in range(sl):
                dsl.store_u16(new[j], c.rs["conv_state"], st["co"] + j)

        dsl.when(st["slot_c"] > 0, write)
        seq = list(st["win"]) + [f32_of(x) for x in xs]  # type: ignore[arg-type]
        cw = [f32_of(dsl.element(st["cw"], q)) for q in range(CONV_W)]
        outs = []
        for j in range(L):
            acc = fx.Float32(0.0)
            for q in range(CONV_W):
                acc = acc + cw[q] * seq[j + q]
            outs.append(bf16r(acc * sigmoid(acc)))
        lane = k.ch * VCH + c.tid % VCH
        items = [
            (idx.qk(k.req, k.h, j, imin(k.part, 1), lane, L), bits_of(outs[j])) for j in range(L)
        ]
        c.put(Region.QK, items, k.part < 2, mark=False)  # marked by every wave, below
        for j in range(L):
            dsl.when(k.part == 2, lambda j=j: fx.ptr_store(outs[j], vloc + (j * VCH + c.tid % VCH)))

    dsl.when(c.tid < 3 * VCH, owned)
    c.put_mark(Region.QK)
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
        g = bf16r(butterfly(g, (16, 32))) + st["dtb"]  # g1 is a bf16 hand-off
        gate = fx.Float32(LOWER_BOUND) * sigmoid(st["aa"] * g)  # type: ignore[operator]
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
        sc = rsq(butterfly(x0 * x0 + x1 * x1, (32, 16, 8, 4, 2, 1)) + fx.Float32(L2_EPS))
        sc = (row % 2 == 0).select(sc * fx.Float32(HD**-0.5), sc)

        def keep(
            row: object = row, x0: fx.Float32 = x0, x1: fx.Float32 = x1, sc: fx.Float32 = sc
        ) -> None:
            fx.ptr_store(x0 * sc, qkl + (dsl.i32(row) * HD + c.lane))
            fx.ptr_store(x1 * sc, qkl + (dsl.i32(row) * HD + 64 + c.lane))

        dsl.when((c.wave + WAVES * r2) < 2 * L, keep)
    dsl.barrier()


def kda_recur(c: Ctx, k: Task, st: dict[str, object]) -> None:
    """State rows 16 ch .. of head h over the L tokens: the state after token j written
    to slot ``st_idx[req, j]`` (where it and the initial slot are > 0), bf16 outputs to
    LDS ``ol`` (0 for a dead request), their partial norms to ONRM."""
    L = c.cfg.L
    qkl, decay, beta, vloc, ol = (
        c.lds["qkl"],
        c.lds["decay"],
        c.lds["beta"],
        c.lds["vloc"],
        c.lds["ol"],
    )
    live0 = st["slot0"] > 0  # type: ignore[operator]
    s = [live0.select(f32_of(dsl.element(st["st"], e)), fx.Float32(0.0)) for e in range(4)]
    for j in fx.range_constexpr(L):
        qv = [fx.ptr_load(qkl + ((2 * j) * HD + k.k0 + e)) for e in range(4)]
        kv = [fx.ptr_load(qkl + ((2 * j + 1) * HD + k.k0 + e)) for e in range(4)]
        dk = [fx.ptr_load(decay + (j * HD + k.k0 + e)) for e in range(4)]
        s = [s[e] * dk[e] for e in range(4)]
        p = butterfly(s[0] * kv[0] + s[1] * kv[1] + s[2] * kv[2] + s[3] * kv[3])
        vn = (fx.ptr_load(vloc + (j * VCH + k.v_row)) - p) * fx.ptr_load(beta + j)
        s = [s[e] + vn * kv[e] for e in range(4)]
        o = bf16r(butterfly(s[0] * qv[0] + s[1] * qv[1] + s[2] * qv[2] + s[3] * qv[3]))
        o = live0.select(o, fx.Float32(0.0))
        words = fx.Vector.from_elements([bits_of(x) for x in s], fx.Int32)
        slot = st["slots"][j]  # type: ignore[index]

        def write(words: object = words, slot: object = slot) -> None:
            dsl.store(words, c.rs["rstate"], idx.state_entry(slot, k.h, k.vr, k.k0))

        dsl.when((slot > 0) & live0, write)
        dsl.when(c.lane % 32 == 0, lambda j=j, o=o: fx.ptr_store(o, ol + (j * VCH + k.v_row)))
    dsl.barrier()
    t = imin(c.tid, L - 1)
    ss = fx.Float32(0.0)
    for e in fx.range_constexpr(VCH):
        x = fx.ptr_load(ol + (t * VCH + e))
        ss = ss + x * x
    c.put(Region.ONRM, [(idx.onrm(k.req, k.h, t, k.ch, L), bits_of(ss))], c.tid < L)
    dsl.barrier()


def kda_norm(c: Ctx, k: Task, st: dict[str, object]) -> None:
    """ONRM + PROJ g2 -> core_out (bf16). on_w: as k.stage loaded it (``onw_first``); without,
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
        dsl.store_u16(bf16_bits(y), c.rs["core_out"], idx.core_out_entry(k.req, j, k.h, vr, L))

    dsl.when(c.tid < L * VCH, rows)
    dsl.barrier()


def kda_task(c: Ctx, i: object, n: object) -> None:
    """Task ``i``, the CTA's ``n``-th: every stage stamps its own column and, as the
    twin does, the last-task column."""
    k = Task(c, i)
    base = c.layout.task_base(0) + dsl.i32(n) * 5
    outer, c.task = c.task, k.i  # a give-up record names the task

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
    c.task = outer
