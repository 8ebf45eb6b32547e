// Package deploy holds what an operator installs the server with, not Go
// code: the systemd unit and its drop-ins (systemd/), the container image
// (container/) and a Grafana dashboard (grafana/). Its tests check the
// first two in make test: the unit with systemd-analyze, the image by
// building it with podman and reading what it holds.
package deploy
