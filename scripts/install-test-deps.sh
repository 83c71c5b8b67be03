#!/usr/bin/env bash
# System packages the test suite runs for real: Prometheus (LoadAware reads real PromQL).
# Debian/Ubuntu only; elsewhere install a `prometheus` binary on PATH yourself.
set -euo pipefail
if command -v prometheus >/dev/null 2>&1; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update -qq >/dev/null
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends prometheus >/dev/null
