#!/usr/bin/env bash
# Make a FlyDSL compile-only toolchain on a fresh Debian machine (no ROCm, no GPU).
#
# Usage:
#   bash scripts/flydsl_env.sh            # install flydsl + an ld.lld that links code object v6
#   eval "$(bash scripts/flydsl_env.sh --print-env [ARCH])"   # only print the exports
#   KDA_FLYDSL_LINKER=ziglang bash scripts/flydsl_env.sh       # skip apt, use PyPI's LLD
#   KDA_FLYDSL_ROOT=DIR ...                                     # another root (default ~/.cache)
#
# FlyDSL's ROCDL serializer links with <root>/llvm/bin/ld.lld, root = $ROCM_PATH.
# Debian bookworm's default lld (14) rejects code object v6 ("unknown abi version"),
# so we point a private root at lld-19 (apt) or, where apt cannot install it,
# at PyPI ziglang's LLD behind a wrapper. See shared/FLYDSL.md.
set -euo pipefail

ROOT="${KDA_FLYDSL_ROOT:-${XDG_CACHE_HOME:-$HOME/.cache}/kda-sim/rocm}"
FLYDSL_VERSION="0.5.0"

print_env() {
    local arch="${1:-gfx950}"
    cat <<ENV
export ROCM_PATH="$ROOT"
export COMPILE_ONLY=1
export ARCH="$arch"
export FLYDSL_GPU_ARCH="$arch"
export FLYDSL_COMPILE_BACKEND=rocm
export FLYDSL_RUNTIME_KIND=rocm
export FLYDSL_RUNTIME_ENABLE_CACHE=0
ENV
}

if [[ "${1:-}" == "--print-env" ]]; then
    print_env "${2:-gfx950}"
    exit 0
fi

log() { echo "flydsl_env: $*" >&2; }

install_flydsl() {
    if python -c "import flydsl, sys; sys.exit(flydsl.__version__ != '$FLYDSL_VERSION')" 2>/dev/null; then
        log "flydsl $FLYDSL_VERSION already installed"
        return
    fi
    # --no-deps: the wheel declares none, and torch must never be replaced.
    python -m pip install --quiet --no-deps "flydsl==$FLYDSL_VERSION"
}

lld_links_v6() {
    # lld >= 16 knows code object v6; a version check is cheaper than a test link.
    local lld="$1" major
    major="$("$lld" --version 2>/dev/null | sed -n 's/.*LLD \([0-9]*\).*/\1/p' | head -1)"
    [[ -n "$major" && "$major" -ge 16 ]]
}

install_lld() {
    mkdir -p "$ROOT/llvm/bin"
    local target="$ROOT/llvm/bin/ld.lld"
    if [[ -x "$target" ]] && lld_links_v6 "$target"; then
        log "ld.lld already at $target"
        return
    fi
    local deb=/usr/lib/llvm-19/bin/ld.lld
    if [[ "${KDA_FLYDSL_LINKER:-}" == "ziglang" ]]; then
        deb=/nonexistent
    elif [[ ! -x "$deb" ]] && command -v apt-get >/dev/null; then
        if ! DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends lld-19 llvm-19 >/dev/null 2>&1; then
            apt-get update >/dev/null 2>&1 || true
            DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends lld-19 llvm-19 >/dev/null 2>&1 || true
        fi
    fi
    if [[ -x "$deb" ]] && lld_links_v6 "$deb"; then
        ln -sf "$deb" "$target"
        log "ld.lld -> $deb"
        return
    fi
    log "lld-19 unavailable; using PyPI ziglang's LLD"
    python -m pip install --quiet ziglang
    # the interpreter that has ziglang, by absolute path: PATH may differ under CI
    local py
    py="$(python -c 'import sys; print(sys.executable)')"
    printf '#!/bin/sh\nexec "%s" -m ziglang ld.lld "$@"\n' "$py" >"$target"
    chmod +x "$target"
    lld_links_v6 "$target" || { log "ziglang's ld.lld does not run"; exit 1; }
}

objdump_knows_gfx950() {
    # LLVM 20 is the first whose llvm-objdump decodes gfx950
    local d
    for d in /usr/lib/llvm-*/bin/llvm-objdump; do
        [[ -x "$d" ]] || continue
        d="${d#/usr/lib/llvm-}"
        [[ "${d%%/*}" -ge 20 ]] && return 0
    done
    return 1
}

install_objdump() {
    # `kda-sim isa` reads code objects with the newest llvm-objdump; Debian 12's
    # security suite has llvm-22, which knows gfx942 and gfx950 (llvm-19 only gfx942,
    # and decodes gfx950 as it with the gfx950-only instructions left out)
    if objdump_knows_gfx950; then
        log "an llvm-objdump that knows gfx950 is installed"
        return
    fi
    command -v apt-get >/dev/null || { log "no apt-get: gfx950 code objects decode as gfx942"; return; }
    local apt=(env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends llvm-22)
    if ! "${apt[@]}" >/dev/null 2>&1; then
        apt-get update >/dev/null 2>&1 || true
        "${apt[@]}" >/dev/null 2>&1 \
            || log "llvm-22 not installed: gfx950 code objects decode as gfx942 (docs/isa/README.md)"
    fi
}

install_flydsl
install_lld
install_objdump
log "ready: eval \"\$(bash scripts/flydsl_env.sh --print-env gfx950)\""
