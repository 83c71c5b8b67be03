#!/usr/bin/env bash
# System packages the test suite runs for real: Prometheus (LoadAware reads real PromQL) and
# Chromium (kubesched ui's browser tests drive Debian's /usr/bin/chromium through Playwright;
# nothing is downloaded at test time).
# Debian/Ubuntu only; elsewhere install `prometheus` on PATH and a Chromium at /usr/bin/chromium yourself.
set -euo pipefail
want=()
command -v prometheus >/dev/null 2>&1 || want+=(prometheus)
[ -x /usr/bin/chromium ] || want+=(chromium)
if [ "${#want[@]}" -eq 0 ]; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update -qq >/dev/null
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${want[@]}" >/dev/null
