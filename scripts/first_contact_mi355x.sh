#!/usr/bin/env bash
# The first run of the FlyDSL K1 on an MI355X, recorded once (kernel/flydsl/README.md,
# "On an MI355X"): every shape the build allows (R, L in 1, 2, 4), a cold and a warm
# launch each with its stamps' timeline and the reference check, a warm launch of the
# ktrace build with its ktrace file, and a fit of the mi355x profile on the traces; one
# folder and its .tar.gz to bring back. Each step has a time
# limit and a log; a failed step does not stop the others. Flags: --out DIR, --shapes
# RxL,.., --warmup N, --timeout S (a launch), --no-ktrace, --help for the rest.
# The logic is kernel/flydsl/first_contact.py (tested in CI against a fake device).
# Nothing of the FlyDSL K1 has run on AMD hardware before this script's first run.
# Needs kda-sim installed (pip install -e . in the repository) on a ROCm torch with flydsl
# (bash scripts/flydsl_env.sh); the folder lands in the current directory.
set -u
# the compile-only environment (flydsl_env.sh --print-env) makes the runner refuse to launch
unset COMPILE_ONLY
# and its ROCM_PATH is a linker-only root (no lib/): the launches need this machine's ROCm
if [[ -n "${ROCM_PATH:-}" && ! -d "$ROCM_PATH/lib" ]]; then
    echo "first_contact: ROCM_PATH=$ROCM_PATH holds no ROCm (no lib/): unset for this run" >&2
    unset ROCM_PATH
fi
PY="${PYTHON:-python3}"
if ! "$PY" -c "import kda_kernel.flydsl.first_contact" 2>/dev/null; then
    echo "first_contact: $PY cannot import kda-sim (pip install -e . in the repository, on a" \
        "ROCm torch; or PYTHON=the python that has it)" >&2
    exit 2
fi
exec "$PY" -m kda_kernel.flydsl.first_contact "$@"
