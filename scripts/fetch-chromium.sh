#!/usr/bin/env bash
# Headless Chromium (Debian's `chromium` package) for the test that opens the HTML report in a
# real browser; installed with apt-get when missing (needs root). Idempotent.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then
    exit 0
fi
if [ "$(id -u)" != 0 ]; then
    echo "fetch-chromium: chromium is missing: run 'apt-get install chromium' as root" >&2
    exit 1
fi
echo "fetch-chromium: installing Debian's chromium (headless browser for the report test)"
export DEBIAN_FRONTEND=noninteractive
timeout 600 apt-get update -qq
timeout 1200 apt-get install -y -qq --no-install-recommends chromium >/dev/null
echo "fetch-chromium: $(chromium --version 2>/dev/null || echo chromium) ready"
