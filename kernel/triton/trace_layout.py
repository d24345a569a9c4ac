"""Where each event sits in a CTA's trace record (int32 words), shared by the kernel and
the host decoder. One record a CTA, flushed once at the kernel's end."""

from __future__ import annotations

# header
EV_START = 0
EV_END = 1
EV_SMID = 2
EV_NTASK = 3
EV_TAG = 4  # the launch's tag: a record from an older launch is never decoded as this one's
# the high halves of the start and end stamps: every other stamp keeps its low half only,
# and the host widens them against these (``kda_kernel.triton.trace.widen``)
EV_START_HI = 5
EV_END_HI = 6
# role stages: the end of each (a stage begins where the previous ended, the first at start)
EV_ROLE = 7  # attn: slice, gate, mix; gemv: load_x, gemv0, gemv1
N_ROLE_STAGES = 3
EV_RPOLL = 10  # role poll sites, 3 words each: first issue, satisfied, retries
N_RPOLL = 3  # attn: gate PART, mix WGT, mix MSQ; gemv: XRDY (the first only)
EV_TASK0 = EV_RPOLL + 3 * N_RPOLL  # 19
# a task: its index, then 6 boundaries (k.stage begins .. k.norm ends), then 5 poll sites
TASK_ID = 0
TASK_T = 1
N_TASK_T = 6
TASK_POLL = TASK_T + N_TASK_T  # 7
N_TASK_POLL = 5  # k.conv PROJ, k.gates FA, k.gates QK, k.gates BETA, k.norm ONRM+G2
TASK_STRIDE = TASK_POLL + 3 * N_TASK_POLL  # 22

ATTN_STAGES = ("slice", "gate", "mix")
GEMV_STAGES = ("load_x", "gemv0", "gemv1")
KDA_STAGES = ("k.stage", "k.conv", "k.gates", "k.recur", "k.norm")
ATTN_POLLS = (("gate", "PART"), ("mix", "WGT"), ("mix", "MSQ"))
# Build.gate_local: no gate stage, so neither its end stamp (the mix begins where the slice
# ended) nor the WGT poll is written; site 0 holds the mix's PART poll of every token, its
# S batches as one (the first's issue, the last's satisfaction, the retries of all)
ATTN_POLLS_GATE_LOCAL = (("mix", "PART"), None, ("mix", "MSQ"))
GEMV_POLLS = (("load_x", "XRDY"),)
KDA_POLLS = (
    ("k.conv", "PROJ"),
    ("k.gates", "PROJ"),
    ("k.gates", "QK"),
    ("k.gates", "PROJ"),
    ("k.norm", "ONRM+PROJ"),
)
KDA_POLL_CELLS = ("q/k/v", "f_a", "q/k", "beta", "onrm+g2")


# kda_tickets (LaunchConfig.kda_tickets): a CTA runs as many tasks as it takes tickets for,
# up to all of them, so the record holds a fixed number of task slots and take slots and
# counts the rest (EV_NTASK: tasks run; EV_NTAKE: takes made): a task or take past its
# slots is run and counted but not recorded (the decoder says how many)
TICKET_TASK_SLOTS = 8
TICKET_TAKE_SLOTS = TICKET_TASK_SLOTS + 1  # the last take returns a ticket past the items
EV_TAKE0 = EV_TASK0 + TASK_STRIDE * TICKET_TASK_SLOTS  # 195
# a take: its issue stamp, its return stamp (the ticket shared with the CTA), the ticket
TAKE_ISSUE = 0
TAKE_RETURN = 1
TAKE_TICKET = 2
TAKE_STRIDE = 3
EV_NTAKE = EV_TAKE0 + TAKE_STRIDE * TICKET_TAKE_SLOTS  # 222


def task_slots(R: int, blocks: int = 256, tickets: bool = False) -> int:
    """Task slots a record holds: the busiest CTA's tasks under the static placement, a
    fixed number under kda_tickets."""
    return TICKET_TASK_SLOTS if tickets else max_tasks(R, blocks)


def stamp_words(R: int, blocks: int = 256, tickets: bool = False) -> list[int]:
    """The words of a record that hold a globaltimer stamp (the rest are counts and ids)."""
    words = [EV_START, EV_END, *range(EV_ROLE, EV_ROLE + N_ROLE_STAGES)]
    words += [EV_RPOLL + 3 * k + j for k in range(N_RPOLL) for j in (0, 1)]
    for n in range(task_slots(R, blocks, tickets)):
        base = EV_TASK0 + n * TASK_STRIDE
        words += [base + TASK_T + k for k in range(N_TASK_T)]
        words += [base + TASK_POLL + 3 * k + j for k in range(N_TASK_POLL) for j in (0, 1)]
    if tickets:
        for m in range(TICKET_TAKE_SLOTS):
            words += [EV_TAKE0 + TAKE_STRIDE * m + TAKE_ISSUE]
            words += [EV_TAKE0 + TAKE_STRIDE * m + TAKE_RETURN]
    return words


def max_tasks(R: int, blocks: int = 256) -> int:
    """kda tasks the busiest CTA runs under the static placement."""
    return -(-R * 96 // blocks)


def record_words(R: int, blocks: int = 256, tickets: bool = False) -> int:
    """Words a CTA's record takes (a power of two: the kernel keeps it as one tensor)."""
    n = EV_NTAKE + 1 if tickets else EV_TASK0 + TASK_STRIDE * max_tasks(R, blocks)
    p = 1
    while p < n:
        p *= 2
    return p
