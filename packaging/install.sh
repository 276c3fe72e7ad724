#!/bin/sh
# Installs an unpacked solr-dedup release: the binary, its manual page, shell completions, the
# systemd units and sysusers entry, the documentation and (unless one is there) the configuration
# file. Run from the unpacked directory:
#
#   sudo ./install.sh                          # /usr/local, /etc/solr-dedup/config.toml
#   ./install.sh --prefix "$HOME/.local" --sysconfdir "$HOME/.config" --no-systemd
#   ./install.sh --destdir /tmp/pkgroot        # stage for a package (paths in the units stay /usr/local)
#
# Then, with systemd: edit /etc/solr-dedup/config.toml (the core), `systemd-sysusers`,
# `systemctl daemon-reload`, `systemctl enable --now solr-dedup.timer solr-dedup-serve.service`.
set -eu

prefix=/usr/local
sysconfdir=/etc
destdir=
systemd=yes
usage() {
    sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
    echo "options: --prefix DIR (/usr/local)  --sysconfdir DIR (/etc)  --destdir DIR  --no-systemd"
}
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) prefix="${2:?--prefix needs a directory}"; shift 2 ;;
        --sysconfdir) sysconfdir="${2:?--sysconfdir needs a directory}"; shift 2 ;;
        --destdir) destdir="${2:?--destdir needs a directory}"; shift 2 ;;
        --no-systemd) systemd=no; shift ;;
        -h|--help) usage; exit 0 ;;
        *) echo "install.sh: error: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
case "$prefix" in /*) ;; *) echo "install.sh: error: --prefix must be absolute: $prefix" >&2; exit 2 ;; esac
case "$sysconfdir" in /*) ;; *) echo "install.sh: error: --sysconfdir must be absolute: $sysconfdir" >&2; exit 2 ;; esac

here="$(cd "$(dirname "$0")" && pwd)"
root="$destdir$prefix"
install -D -m 0755 "$here/bin/solr-dedup" "$root/bin/solr-dedup"
install -D -m 0644 "$here/share/man/man1/solr-dedup.1" "$root/share/man/man1/solr-dedup.1"
install -D -m 0644 "$here/share/bash-completion/completions/solr-dedup" \
    "$root/share/bash-completion/completions/solr-dedup"
install -D -m 0644 "$here/share/zsh/site-functions/_solr-dedup" "$root/share/zsh/site-functions/_solr-dedup"
install -D -m 0644 "$here/share/fish/vendor_completions.d/solr-dedup.fish" \
    "$root/share/fish/vendor_completions.d/solr-dedup.fish"
for f in "$here"/share/doc/solr-dedup/*; do
    install -D -m 0644 "$f" "$root/share/doc/solr-dedup/$(basename "$f")"
done
if [ "$systemd" = yes ]; then
    for unit in "$here"/lib/systemd/system/*; do
        install -d "$root/lib/systemd/system"
        # The units name the binary where this prefix puts it.
        sed "s#/usr/local/bin/solr-dedup#$prefix/bin/solr-dedup#g" "$unit" \
            > "$root/lib/systemd/system/$(basename "$unit")"
        chmod 0644 "$root/lib/systemd/system/$(basename "$unit")"
    done
    install -D -m 0644 "$here/lib/sysusers.d/solr-dedup.conf" "$root/lib/sysusers.d/solr-dedup.conf"
fi
config="$destdir$sysconfdir/solr-dedup/config.toml"
if [ -e "$config" ]; then
    echo "install.sh: kept $config (the new example is in $prefix/share/doc/solr-dedup/config.toml)"
else
    install -D -m 0644 "$here/share/doc/solr-dedup/config.toml" "$config"
fi
echo "install.sh: installed $("$root/bin/solr-dedup" --version) into $root"
