#!/usr/bin/env bash
# Issue 38: what one try of gate's PART poll costs at S = 1, 4 and 16 apart from the hand-off
# (docs/calibration.md, "gate's PART poll: its retries, and a back-off tried in the K1").
# Eight traced K1 launches each of 1 x 1, 2 x 2 and 4 x 4, three builds: as shipped (spin/);
# each gate CTA waiting 5 us after its slice before its first try, when every slice's put
# has landed (delay/: Build.gate_delay_ns); and the same with gate CTA a waiting a further
# a x 2.5 us, so no two gate CTAs try at once (stagger/: Build.gate_stagger_ns). On the
# device machine, in the repository root, with the wheels of .whl/ carried; the traces come
# back as $OUT/gate_delay_traces.tgz (one file: the device brings back a few dozen files at
# most). About 2.5 minutes a build on an H100. Read them here with
#   tar xzf gate_delay_traces.tgz && python -m lab.gate_try spin delay stagger
# Other builds: NAME:"OPTIONS" arguments (lab.trace_spread record's) in place of the three,
# and SHAPES=... (default 1x1,2x2,4x4), e.g. gate CTA 0 polling alone while the puts land:
#   SHAPES=2x2,4x4 bash scripts/device_gate_delay.sh spin: \
#       alone:"--build gate_stagger_ns=5000"
# k.norm's ONRM+PROJ poll the same way (read with python -m lab.norm_try DIR ...): a try over
# landed pairs, the ONRM put after the state's stores have left, chunk 0 polling alone:
#   LAUNCHES=6 bash scripts/device_gate_delay.sh spin: delay:"--build norm_delay_ns=5000" \
#       put:"--build onrm_put_delay_ns=3000" alone:"--build norm_stagger_ns=3000"
# k.recur's token loop rolled (Build.recur_rolled), cold and warm (lab.recur_ends DIR/NAME ...):
#   SHAPES=1x4,2x4,4x4,2x2 bash scripts/device_gate_delay.sh spin: rolled:"--build recur_rolled=1" \
#       spinw:"--warmup 3" rolledw:"--warmup 3 --build recur_rolled=1"
set -u
python3 -m pip install -q --no-index --no-deps --no-build-isolation --no-compile \
    --no-cache-dir --upgrade --target /tmp/site . .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD TRITON_CACHE_DIR=/tmp/tc PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
if [ $# -eq 0 ]; then
    set -- spin: delay:"--build gate_delay_ns=5000" \
        stagger:"--build gate_delay_ns=5000 --build gate_stagger_ns=2500"
fi
names=()
for v in "$@"; do
    d=${v%%:*} opts=${v#*:}
    names+=("$d")
    mkdir -p "$OUT/$d"
    # shellcheck disable=SC2086 # opts: words, split on purpose
    timeout "${BUILD_TIMEOUT:-180}" python3 -m lab.trace_spread record \
        --shapes "${SHAPES:-1x1,2x2,4x4}" --launches "${LAUNCHES:-8}" \
        $opts --dir "$OUT/$d" > "$OUT/$d.log" 2>&1
    echo "$d rc=$? $(ls "$OUT/$d" | wc -l) traces"
done
tar czf "$OUT/gate_delay_traces.tgz" -C "$OUT" "${names[@]}" && (cd "$OUT" && rm -rf "${names[@]}")
