#!/usr/bin/env bash
# What `reclaimlab validate --boot` needs on the host, installed with apt-get when missing:
# QEMU (qemu-system-x86), a static busybox for the guest's initramfs, mkfs.ext4 and mkfs.xfs
# for the data disk (a fresh ext4 or XFS image each boot), and gcc with a static libc for the workload program. The kernel itself is fetched by
# the harness (`apt-get download`, unpacked into .cache/validate/, never installed).
# Not part of CI: the tests never boot a guest.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

need=()
command -v qemu-system-x86_64 >/dev/null 2>&1 || need+=(qemu-system-x86)
[ -x /bin/busybox ] && ! ldd /bin/busybox >/dev/null 2>&1 || need+=(busybox-static)
command -v mkfs.ext4 >/dev/null 2>&1 || need+=(e2fsprogs)
command -v mkfs.xfs >/dev/null 2>&1 || need+=(xfsprogs)
command -v gcc >/dev/null 2>&1 || need+=(gcc)
[ -f /usr/lib/x86_64-linux-gnu/libc.a ] || need+=(libc6-dev)
command -v dpkg-deb >/dev/null 2>&1 || need+=(dpkg)

if [ ${#need[@]} -gt 0 ]; then
    [ "$(id -u)" -eq 0 ] || { echo "validate-setup: error: need root to install: ${need[*]}" >&2; exit 2; }
    echo "validate-setup: installing ${need[*]}"
    timeout 600 apt-get update -qq
    DEBIAN_FRONTEND=noninteractive timeout 1200 apt-get install -y -qq --no-install-recommends "${need[@]}"
fi
echo "validate-setup: $(qemu-system-x86_64 --version | head -1); busybox $(busybox | head -1 | awk '{print $2}')"
if [ -r /dev/kvm ] && [ -w /dev/kvm ]; then
    echo "validate-setup: /dev/kvm is there (the harness still probes that a KVM guest runs)"
else
    echo "validate-setup: no usable /dev/kvm: guests run under TCG (slower, same counters' meaning)"
fi
