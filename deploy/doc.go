// Package deploy holds what an operator installs the server with, not Go
// code: the systemd unit and its drop-ins (systemd/) and a Grafana
// dashboard (grafana/). Its tests check the unit in make test, with
// systemd-analyze and against a run of the server under strace.
package deploy
