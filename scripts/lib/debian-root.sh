# shellcheck shell=bash
# A Debian root made with debootstrap under target/, for builds that must not touch the host:
# the parts scripts/rocm-debian-root (sid, ROCm) and scripts/old-glibc-cpu-build (bullseye,
# glibc 2.31) share. Sourced, never run; needs bash 4.4+ and root (debootstrap, chroot, mount).
#
# The sourcing script sets these, then calls the functions below:
#   dr_name    the log prefix (the script's name)
#   suite      the Debian suite to debootstrap (sid, bullseye, ...)
#   root       the root's path; relative paths are taken from the repository root
#              (call dr_init after setting it: it makes it absolute and sets the traps)
# and may add:
#   dr_bind SRC DEST [ro]   a bind mount at DEST inside the root (read-only with `ro`),
#                           mounted with the rest by mount_root, unmounted on exit
#   root_env=(VAR=value ...)  environment added to every in_root command (after the defaults,
#                           so PATH=... here replaces the default PATH)
#   extra_sources           deb822 stanzas appended to the root's debian.sources
#   dr_exit_hook RC         a function, called on exit after the timings are printed
#
# Functions: log, die, phase/phase_end/print_timings (each phase's wall time, printed on
# exit), mount_root/unmount_all, sync_ca, in_root CMD..., run_in_existing_root CMD... (the
# `-- CMD` form), host_setup (debootstrap on the host, the host's apt proxy and date settings),
# make_root (debootstrap --variant=minbase, skipped when the root has /etc/debian_version),
# configure_apt, resolve_packages ENTRY... (sets `resolved`), apt_install PKG...

dr_lib_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$dr_lib_dir/../.." && pwd)
default_mirror=http://deb.debian.org/debian
dr_name=${dr_name:-debian-root}
suite=${suite:-}
root=${root:-}
root_env=()
extra_sources=""
mirror=""
host_apt_conf=""

log() { printf '[%s] %s\n' "$dr_name" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# ---------------------------------------------------------------- timing
declare -a phase_report=()
phase_name=""
phase_start=0
phase() {
    phase_end
    phase_name=$1
    phase_start=$(date +%s)
    log "== $phase_name"
}
phase_end() {
    if [[ -n $phase_name ]]; then
        local secs=$(( $(date +%s) - phase_start ))
        phase_report+=("$(printf '%-28s %5ds' "$phase_name" "$secs")")
        log "== $phase_name done in ${secs}s"
        phase_name=""
    fi
}
print_timings() {
    phase_end
    if ((${#phase_report[@]})); then
        log "phase timings:"
        local line
        for line in "${phase_report[@]}"; do log "  $line"; done
    fi
}

# ---------------------------------------------------------------- mounts
mounted=()
bind_src=()
bind_dest=()
bind_mode=()
# dr_bind SRC DEST [ro]: DEST is a path inside the root (/repo, /opt/rust).
dr_bind() {
    [[ -d $1 ]] || die "bind mount source $1 is not a folder"
    bind_src+=("$1")
    bind_dest+=("$2")
    bind_mode+=("${3:-rw}")
}
unmount_all() {
    local i
    for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
        if mountpoint -q "${mounted[i]}"; then
            umount "${mounted[i]}" || umount -l "${mounted[i]}" || log "warning: could not unmount ${mounted[i]}"
        fi
    done
    mounted=()
}
on_exit() {
    local rc=$?
    unmount_all
    print_timings
    if declare -F dr_exit_hook >/dev/null; then dr_exit_hook "$rc" || true; fi
    exit "$rc"
}

mount_root() {
    ((${#mounted[@]})) && return 0
    local d i target
    for ((i = 0; i < ${#bind_src[@]}; i++)); do
        target=$root${bind_dest[i]}
        mkdir -p "$target"
        if mountpoint -q "$target"; then
            log "note: $target is already mounted (left as it is)"
            continue
        fi
        mount --bind "${bind_src[i]}" "$target"
        mounted+=("$target")
        if [[ ${bind_mode[i]} == ro ]]; then
            mount -o remount,bind,ro "$target"
        fi
    done
    for d in proc sys dev dev/pts; do
        mkdir -p "$root/$d"
        if mountpoint -q "$root/$d"; then
            log "note: $root/$d is already mounted (left as it is)"
            continue
        fi
        case $d in
            proc) mount -t proc proc "$root/proc" ;;
            *) mount --bind "/$d" "$root/$d" ;;
        esac
        mounted+=("$root/$d")
    done
}

# Anything mounted under the root (a bind mount of the same file system has the same device
# number, so `rm --one-file-system` would go into it).
mounts_under_root() {
    awk -v r="${root%/}/" 'index($2, r) == 1 { print $2 }' /proc/self/mounts
}

# The host's extra CAs (a TLS-inspecting proxy's, say) go into the root's store, and pip,
# which brings its own CA list, is pointed at that store.
sync_ca() {
    local crt copied=0
    for crt in /usr/local/share/ca-certificates/*.crt; do
        [[ -f $crt ]] || continue
        mkdir -p "$root/usr/local/share/ca-certificates"
        cmp -s "$crt" "$root/usr/local/share/ca-certificates/${crt##*/}" && continue
        cp "$crt" "$root/usr/local/share/ca-certificates/"
        copied=1
    done
    if ((copied)) && [[ -x $root/usr/sbin/update-ca-certificates ]]; then
        chroot "$root" /usr/sbin/update-ca-certificates >/dev/null
    fi
}

in_root() {
    mount_root
    chroot "$root" /usr/bin/env -i \
        HOME=/root TERM="${TERM:-dumb}" LANG=C.UTF-8 \
        PIP_CERT=/etc/ssl/certs/ca-certificates.crt \
        SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt \
        REQUESTS_CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt \
        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        DEBIAN_FRONTEND=noninteractive \
        ${http_proxy:+http_proxy="$http_proxy"} ${https_proxy:+https_proxy="$https_proxy"} \
        "${root_env[@]}" \
        "$@"
}

# ---------------------------------------------------------------- setup
# After setting dr_name, suite and root: the root's absolute path, the traps, the root check.
dr_init() {
    [[ -n $suite && -n $root ]] || die "set suite and root before dr_init"
    case $root in
        /*) ;;
        *) root="$repo_root/$root" ;;
    esac
    root=${root%/}
    trap on_exit EXIT
    trap 'exit 130' INT TERM
    [[ $(id -u) -eq 0 ]] || die "must run as root (debootstrap, chroot and mount need it)"
}

# `script -- CMD...`: only run a command (default: a shell) in an existing root.
run_in_existing_root() {
    [[ -f $root/etc/debian_version ]] || die "no root at $root: run the script without arguments first"
    cp -L /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
    sync_ca
    mount_root
    in_root "${@:-/bin/bash}"
}

# debootstrap on the host, and the host apt settings that the root needs too: the proxy
# (Acquire::http::Proxy and friends) and, where the host turns them off because its mirror
# serves a frozen snapshot or its clock is off, the Release date checks
# (Acquire::Check-Valid-Until, Acquire::Check-Date).
host_setup() {
    phase "host: debootstrap"
    if ! command -v debootstrap >/dev/null 2>&1; then
        apt-get update
        apt-get install -y debootstrap
    fi
    debootstrap --version >&2 || true

    host_apt_conf=$( { cat /etc/apt/apt.conf 2>/dev/null; cat /etc/apt/apt.conf.d/* 2>/dev/null; } \
        | grep -Ei '^[[:space:]]*Acquire::((https?|ftp)::Proxy|Check-Valid-Until|Check-Date)' || true)
    local host_proxy_conf p
    host_proxy_conf=$(printf '%s\n' "$host_apt_conf" | grep -Ei 'Proxy' || true)
    if [[ -n $host_proxy_conf && -z ${http_proxy:-} ]]; then
        p=$(printf '%s\n' "$host_proxy_conf" | grep -Ei 'Acquire::http::Proxy[[:space:]]' | head -n1 \
            | sed -E 's/.*"([^"]*)".*/\1/' || true)
        if [[ -n $p && $p != DIRECT && $p != false ]]; then
            export http_proxy=$p
            log "using the host's apt proxy for debootstrap: $http_proxy"
        fi
    fi
}

reachable() {
    local url=$1/dists/$suite/Release
    if command -v curl >/dev/null 2>&1; then
        curl -fsSI --max-time 20 "$url" >/dev/null 2>&1
    else
        wget -q --spider --timeout=20 "$url" >/dev/null 2>&1
    fi
}

# The mirror: deb.debian.org, else the first Debian (non-security) URI the host uses.
pick_mirror() {
    if reachable "$default_mirror"; then
        echo "$default_mirror"
        return
    fi
    local uri
    for uri in $( { grep -hE '^[[:space:]]*URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null \
                      | sed -E 's/^[[:space:]]*URIs:[[:space:]]*//'
                    grep -hE '^[[:space:]]*deb[[:space:]]' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null \
                      | sed -E 's/^[[:space:]]*deb[[:space:]]+(\[[^]]*\][[:space:]]+)?//' | awk '{print $1}'
                  } | grep -v security | grep -i debian ); do
        if reachable "$uri"; then
            echo "$uri"
            return
        fi
    done
    die "no Debian mirror with $suite reachable (tried $default_mirror and the host's sources)"
}

make_root() {
    phase "debootstrap $suite"
    if [[ -f $root/etc/debian_version ]]; then
        log "$root already has /etc/debian_version ($(cat "$root/etc/debian_version")): skipping debootstrap"
        mirror=$(sed -nE 's/^URIs:[[:space:]]*//p' "$root/etc/apt/sources.list.d/debian.sources" 2>/dev/null | head -n1)
        mirror=${mirror:-$default_mirror}
    else
        mirror=$(pick_mirror)
        log "mirror: $mirror"
        if [[ -e $root ]] && [[ -n $(ls -A "$root" 2>/dev/null) ]]; then
            # A previous debootstrap was interrupted: start over.
            log "removing the unfinished root at $root"
            unmount_all
            local left
            left=$(mounts_under_root)
            [[ -z $left ]] || die "still mounted under $root (unmount first): ${left//$'\n'/ }"
            rm -rf --one-file-system "$root"
        fi
        mkdir -p "$root"
        debootstrap --variant=minbase "$suite" "$root" "$mirror"
    fi
}

# deb822 sources, one file, main only (plus $extra_sources); no recommends; the host's apt
# Acquire settings; no daemons start in the chroot. Then mounts (in the main shell, so that
# the EXIT trap knows what to unmount: in_root inside $(...) or a pipeline runs in a subshell).
configure_apt() {
    phase "configure apt in the root"
    rm -f "$root/etc/apt/sources.list"
    {
        cat <<EOF
Types: deb
URIs: $mirror
Suites: $suite
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
        if [[ -n $extra_sources ]]; then
            printf '\n%s\n' "$extra_sources"
        fi
    } >"$root/etc/apt/sources.list.d/debian.sources"
    cat >"$root/etc/apt/apt.conf.d/90ct2v" <<'EOF'
APT::Install-Recommends "false";
APT::Install-Suggests "false";
Acquire::Languages "none";
Dpkg::Use-Pty "false";
EOF
    if [[ -n $host_apt_conf ]]; then
        printf '%s\n' "$host_apt_conf" >"$root/etc/apt/apt.conf.d/01host-acquire"
        log "copied the host's apt Acquire settings into the root:"
        printf '%s\n' "$host_apt_conf" | sed 's/^/    /' >&2
    else
        rm -f "$root/etc/apt/apt.conf.d/01host-acquire"
    fi
    cp -L /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
    printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
    chmod 755 "$root/usr/sbin/policy-rc.d"
    mount_root
}

# Package entries: `name` or `alt1|alt2|...` (the first that exists is taken); a leading `?`
# marks one optional (skipped with a note when none exists). The picks go into `resolved`.
resolve_packages() {
    phase "resolve package names"
    resolved=()
    local entry optional pick alt
    local -a alts
    for entry in "$@"; do
        optional=0
        if [[ $entry == \?* ]]; then optional=1; entry=${entry#\?}; fi
        pick=""
        IFS='|' read -r -a alts <<<"$entry"
        for alt in "${alts[@]}"; do
            # A real (not purely virtual) package has a Version in apt-cache show.
            if [[ $(in_root apt-cache show --no-all-versions "$alt" 2>/dev/null) == *$'\nVersion: '* ]]; then
                pick=$alt
                break
            fi
        done
        if [[ -n $pick ]]; then
            resolved+=("$pick")
        elif ((optional)); then
            log "note: none of '$entry' exists in $suite: skipped"
        else
            die "none of '$entry' exists in $suite"
        fi
    done
    log "installing: ${resolved[*]}"
}

apt_update() {
    phase "apt-get update"
    in_root apt-get update
}

apt_install() {
    phase "apt-get install"
    in_root apt-get install -y --no-install-recommends "$@"
    in_root apt-get clean
}
