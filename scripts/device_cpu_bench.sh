#!/usr/bin/env bash
# Issue 40's figures on a quiet host: the device machine's CPU, two of its cores
# (taskset -c 0,1, as this repository's 2-core machine), nothing else running. Three
# alternations of bench/sim_bench.py (mi355x and h200, R=4 L=2), bench/sweep_bench.py
# (kda-sim sweep --gpu h200 --jobs 2) and twice the bundled fit's four-trace calibrate
# recipe (docs/calibration.md, "The bundled fit") with --jobs 2. On the device machine, in
# the repository root, with the wheels of .whl/ carried; the output comes back as
# $OUT/cpubench.tgz.
set -u
python3 -m pip install -q --no-index --no-deps --no-build-isolation --no-compile \
    --no-cache-dir --target /tmp/site . .whl/*.whl > /dev/null 2>&1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
R=$OUT/cpubench
mkdir -p "$R"
{ python3 -V; nproc; lscpu | grep -i 'model name'; uptime; git rev-parse HEAD; } > "$R/host.txt" 2>&1
python3 -c "import scipy, matplotlib, rich, tqdm, networkx, numpy, simpy" >> "$R/host.txt" 2>&1 || exit 3
T=traces/k1_h200
C="taskset -c 0,1"
for i in 1 2 3; do
    $C python3 bench/sim_bench.py --repeat 9 > "$R/sim_mi355x_$i.txt" 2>&1
    $C python3 bench/sim_bench.py --gpu h200 --repeat 9 > "$R/sim_h200_$i.txt" 2>&1
done
$C python3 bench/sweep_bench.py --repeat 3 > "$R/sweep.txt" 2>&1
for i in 1 2; do
    t0=$(date +%s.%N)
    $C python3 -m kda_sim.cli calibrate ${T}_R1_L1.json.gz ${T}_R1_L2.json.gz ${T}_R1_L4.json.gz \
        ${T}_R4_L4.json.gz --gpu h200-stock --switch gemv:3 --out "$R/fit_$i.json" \
        --holdout ${T}_R2_L1.json.gz ${T}_R2_L2.json.gz ${T}_R2_L4.json.gz ${T}_R4_L1.json.gz \
        --budget 150 --force --json --no-progress --jobs 2 > "$R/cal_$i.json" 2> "$R/cal_err_$i.txt"
    echo "calibrate $i rc=$? $(python3 -c "print(round($(date +%s.%N) - $t0, 2))") s" >> "$R/host.txt"
done
uptime >> "$R/host.txt"
tar czf "$OUT/cpubench.tgz" -C "$OUT" cpubench && rm -rf "$R"
