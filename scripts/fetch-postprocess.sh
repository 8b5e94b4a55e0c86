#!/usr/bin/env bash
# Put the kernel's own trace-vmscan-postprocess.pl (Debian's linux-source-6.1 package) at
# .cache/trace-vmscan-postprocess.pl, for the trace compatibility test. Idempotent.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
dest=.cache/trace-vmscan-postprocess.pl
[ -s "$dest" ] && exit 0
tarball=/usr/src/linux-source-6.1.tar.xz
if [ ! -f "$tarball" ]; then
    if [ "$(id -u)" != 0 ]; then
        echo "fetch-postprocess: need $tarball: run 'apt-get install linux-source-6.1' as root" >&2
        exit 1
    fi
    echo "fetch-postprocess: installing linux-source-6.1 (Debian) for its trace script"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq linux-source-6.1 >/dev/null
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tar -xJf "$tarball" -C "$tmp" linux-source-6.1/Documentation/trace/postprocess/trace-vmscan-postprocess.pl
mkdir -p .cache
mv "$tmp/linux-source-6.1/Documentation/trace/postprocess/trace-vmscan-postprocess.pl" "$dest"
echo "fetch-postprocess: $dest ready"
