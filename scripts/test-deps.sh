#!/usr/bin/env bash
# What make test needs beside Go, installed when missing: Chromium (the
# browser tests drive it, and fail rather than skip without it) with fonts
# that keep the pages and screenshots legible; Node.js with npm (make
# test-tools installs the MCP inspector with them); curl (go test ./docs
# runs the guides' curl commands); for deploy/'s tests,
# systemd's systemd-analyze and systemd-sysusers (they check the service
# unit; no running systemd is needed), strace (the unit's system call
# filter against a run of the server), and podman with the CA bundle (the
# container image, FROM scratch, so no registry is reached). As root on
# Debian it installs them with apt-get, with no recommends: Chromium's
# others (udev, upower, a printer tool) serve a desktop, not headless
# tests. Otherwise it stops at once and names the packages to install.
set -euo pipefail
missing=""
command -v chromium >/dev/null 2>&1 || missing="$missing chromium fonts-liberation"
command -v npm >/dev/null 2>&1 || missing="$missing nodejs npm"
command -v curl >/dev/null 2>&1 || missing="$missing curl"
command -v systemd-analyze >/dev/null 2>&1 || missing="$missing systemd"
command -v strace >/dev/null 2>&1 || missing="$missing strace"
command -v podman >/dev/null 2>&1 || missing="$missing podman"
[ -f /etc/ssl/certs/ca-certificates.crt ] || missing="$missing ca-certificates"
[ -z "$missing" ] && exit 0
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "test-deps: installing$missing" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing
  exit 0
fi
echo "test-deps: make test needs these packages, missing here:$missing" >&2
echo "test-deps: install them (on Debian: sudo apt-get install --no-install-recommends$missing) and run make test again" >&2
exit 1
