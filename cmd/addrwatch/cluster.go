package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"

	"github.com/addrwatch/addrwatch/persistence"
)

// backupMagic starts every backup file the admin API writes, so a file that
// is not one (a proxy's error page, a wrong path) is caught before it is
// kept or uploaded.
const backupMagic = persistence.SnapshotMagic

var clusterStatusCommand = &command{
	words:   []string{"cluster", "status"},
	summary: "show the leader, the nodes and the applied index",
	details: `Show the raft cluster as the admin API reports it (GET /admin/v1/cluster):
the leader, every node's id, raft address, state and suffrage, and the applied
index. The JSON is printed indented; --json prints it as received.`,
	example: "addrwatch cluster status --admin http://10.0.0.5:8081",
	api:     adminAPI,
	define: func(*flag.FlagSet) action {
		return func(ctx context.Context, a *app, _ []string) error {
			return clusterStatus(ctx, a)
		}
	},
}

var clusterAddCommand = &command{
	words:   []string{"cluster", "add"},
	args:    []string{"ID", "RAFT_ADDR"},
	summary: "add a node to the cluster (a voter once it has caught up)",
	details: `Add the node ID, reachable for raft at RAFT_ADDR (host:port), to the cluster
as a non-voter (POST /admin/v1/cluster/nodes): the leader replicates the log
to it, but it does not count towards a quorum, so a node that never comes up
costs the cluster nothing. The leader makes it a voter by itself once it
has caught up ('cluster status' then shows it as a follower). Start the
new node first, with --join on an empty data dir. Any node may be asked: a follower forwards the request to the leader. ID is
letters, digits, '.', '_' and '-'; a bad ID or address is refused.`,
	example: "addrwatch cluster add n4 10.0.0.8:7000 --admin http://10.0.0.5:8081",
	api:     adminAPI,
	define: func(*flag.FlagSet) action {
		return func(ctx context.Context, a *app, args []string) error {
			if err := checkID("ID", args[0]); err != nil {
				return err
			}
			if host, port, err := net.SplitHostPort(args[1]); err != nil || host == "" || port == "" {
				return usagef("RAFT_ADDR must be host:port, got %q", args[1])
			}
			return addNode(ctx, a, args[0], args[1])
		}
	},
}

var clusterRemoveCommand = &command{
	words:   []string{"cluster", "remove"},
	args:    []string{"ID"},
	summary: "remove a node from the cluster",
	details: `Remove the node ID from the cluster configuration
(DELETE /admin/v1/cluster/nodes/ID). Removing the leader makes the others
elect a new one. A removal that would leave the voters without a majority of
nodes that answer the leader is refused (409 CONFLICT, naming the nodes that
do not answer).`,
	example: "addrwatch cluster remove n3",
	api:     adminAPI,
	define: func(*flag.FlagSet) action {
		return func(ctx context.Context, a *app, args []string) error {
			if err := checkID("ID", args[0]); err != nil {
				return err
			}
			return removeNode(ctx, a, args[0])
		}
	},
}

var clusterTransferCommand = &command{
	words:    []string{"cluster", "transfer"},
	optional: []string{"ID"},
	summary:  "move leadership to another voter",
	details: `Ask the leader to hand leadership over (POST /admin/v1/cluster/transfer):
to the voter ID when given, otherwise to whichever voter is most up to date.
Useful before restarting the leader for maintenance. On a sharded cluster
(--groups) name the group with --group: each group has a leader of its own.
Check the result with 'addrwatch cluster status'.`,
	example: "addrwatch cluster transfer n2",
	api:     adminAPI,
	define: func(fs *flag.FlagSet) action {
		group := fs.Int("group", -1, "the raft group whose leadership moves (sharded clusters only)")
		return func(ctx context.Context, a *app, args []string) error {
			id := ""
			if len(args) > 0 {
				if err := checkID("ID", args[0]); err != nil {
					return err
				}
				id = args[0]
			}
			return transferLeadership(ctx, a, id, *group)
		}
	},
}

var clusterMoveSlotCommand = &command{
	words:   []string{"cluster", "move-slot"},
	args:    []string{"SLOT_OR_ACCOUNT", "GROUP"},
	summary: "move a slot of accounts to another raft group (sharded clusters)",
	details: `On a cluster started with --groups, move one slot's accounts to the raft group
GROUP (POST /admin/v1/cluster/slots/move). SLOT_OR_ACCOUNT is a slot number
(0 to 4095) or an account ID, meaning that account's slot. The move runs in
the background and takes about a second; meanwhile the slot's accounts
answer 503 with Retry-After, and 'addrwatch cluster status' lists it under
"moves" until it ends. Any node may be asked: it forwards the request to the
meta group's leader.`,
	example: "addrwatch cluster move-slot 1234 2",
	api:     adminAPI,
	define: func(*flag.FlagSet) action {
		return func(ctx context.Context, a *app, args []string) error {
			group, err := strconv.Atoi(args[1])
			if err != nil || group < 0 {
				return usagef("GROUP must be a group number, got %q", args[1])
			}
			in := map[string]any{"to": group}
			if slot, err := strconv.Atoi(args[0]); err == nil {
				in["slot"] = slot
			} else {
				if err := checkID("ACCOUNT", args[0]); err != nil {
					return err
				}
				in["account"] = args[0]
			}
			return moveSlot(ctx, a, in)
		}
	},
}

var clusterDrainCommand = &command{
	words:   []string{"cluster", "drain"},
	args:    []string{"ID"},
	summary: "move every group's leadership off a node (sharded clusters)",
	details: `On a cluster started with --groups, have the node ID hand over every group
it leads and lead none until told otherwise (POST /admin/v1/cluster/drain):
do it before restarting the node, so that none of its groups has to elect a
new leader. --undo ends it; the node then gets its share of the groups back.
'addrwatch cluster status' lists the draining nodes under meta.draining.`,
	example: "addrwatch cluster drain n2",
	api:     adminAPI,
	define: func(fs *flag.FlagSet) action {
		undo := fs.Bool("undo", false, "end the drain")
		return func(ctx context.Context, a *app, args []string) error {
			if err := checkID("ID", args[0]); err != nil {
				return err
			}
			c, err := a.adminClient()
			if err != nil {
				return err
			}
			body, err := c.do(ctx, http.MethodPost, "/admin/v1/cluster/drain", map[string]any{"id": args[0], "drain": !*undo})
			if err != nil {
				return err
			}
			line := "%s is draining: it hands over the groups it leads\n"
			if *undo {
				line = "%s is no longer draining\n"
			}
			return a.printAnswer(body, line, args[0])
		}
	},
}

var clusterSnapshotCommand = &command{
	words:   []string{"cluster", "snapshot"},
	summary: "take a raft snapshot now",
	details: `Ask the node to take a raft snapshot now (POST /admin/v1/snapshot) instead of
waiting for the periodic one. 'addrwatch snapshot' does the same.`,
	example: "addrwatch cluster snapshot --data /var/lib/addrwatch",
	api:     adminAPI,
	define: func(*flag.FlagSet) action {
		return func(ctx context.Context, a *app, _ []string) error {
			return takeSnapshot(ctx, a)
		}
	},
}

var snapshotCommand = &command{
	words:   []string{"snapshot"},
	summary: "take a raft snapshot now (same as cluster snapshot)",
	details: `Ask the node to take a raft snapshot now (POST /admin/v1/snapshot) instead of
waiting for the periodic one. Same as 'addrwatch cluster snapshot'.`,
	example: "addrwatch snapshot --data /var/lib/addrwatch",
	api:     adminAPI,
	define: func(*flag.FlagSet) action {
		return func(ctx context.Context, a *app, _ []string) error {
			return takeSnapshot(ctx, a)
		}
	},
}

var clusterBackupCommand = &command{
	words:    []string{"cluster", "backup"},
	args:     []string{"FILE"},
	synopsis: "[--force]",
	summary:  "download a consistent backup of the whole state to FILE",
	details: `Download a consistent snapshot of the whole state (GET /admin/v1/backup) and
save it as FILE (mode 0600). The file is written beside FILE under a temporary
name and renamed into place only once complete and checked, so FILE is never
left half-written. An existing FILE is kept unless --force is given. The
backup holds every account's data and credential hashes: store it as securely
as the data directory. The transfer may take up to 10 minutes.`,
	example: "addrwatch cluster backup addrwatch-$(date +%F).snap",
	api:     adminAPI,
	define: func(fs *flag.FlagSet) action {
		force := fs.Bool("force", false, "overwrite FILE if it exists")
		return func(ctx context.Context, a *app, args []string) error {
			if args[0] == "" {
				return usagef("FILE must not be empty")
			}
			return backup(ctx, a, args[0], *force)
		}
	},
}

var clusterRestoreCommand = &command{
	words:   []string{"cluster", "restore"},
	args:    []string{"FILE"},
	summary: "replace the whole state with a backup FILE",
	details: `Upload FILE, a backup from 'addrwatch cluster backup', and replace the
cluster's whole state with it (POST /admin/v1/restore). Every account and
change made since the backup is lost. The server checks the file whole before
replacing anything. The transfer may take up to 10 minutes.`,
	example: "addrwatch cluster restore addrwatch-2026-01-31.snap",
	api:     adminAPI,
	define: func(*flag.FlagSet) action {
		return func(ctx context.Context, a *app, args []string) error {
			if args[0] == "" {
				return usagef("FILE must not be empty")
			}
			return restore(ctx, a, args[0])
		}
	},
}

func clusterStatus(ctx context.Context, a *app) error {
	c, err := a.adminClient()
	if err != nil {
		return err
	}
	body, err := c.do(ctx, http.MethodGet, "/admin/v1/cluster", nil)
	if err != nil {
		return err
	}
	if a.globals.json {
		return printRaw(a.stdout, body)
	}
	return printPretty(a.stdout, body)
}

func takeSnapshot(ctx context.Context, a *app) error {
	c, err := a.adminClient()
	if err != nil {
		return err
	}
	body, err := c.do(ctx, http.MethodPost, "/admin/v1/snapshot", nil)
	if err != nil {
		return err
	}
	if a.globals.json {
		return printRaw(a.stdout, body)
	}
	// The admin API does not promise a body for a snapshot; show whatever
	// it reports, or a plain confirmation when it reports nothing.
	if len(bytes.TrimSpace(body)) == 0 {
		_, err = fmt.Fprintln(a.stdout, "snapshot taken")
		return err
	}
	return printPretty(a.stdout, body)
}

func addNode(ctx context.Context, a *app, id, raftAddr string) error {
	c, err := a.adminClient()
	if err != nil {
		return err
	}
	body, err := c.do(ctx, http.MethodPost, "/admin/v1/cluster/nodes", map[string]string{
		"id":        id,
		"raft_addr": raftAddr,
	})
	if err != nil {
		return err
	}
	if a.globals.json {
		return printRaw(a.stdout, body)
	}
	var added struct {
		Suffrage string `json:"suffrage"`
	}
	if err := decodeResponse(body, &added); err != nil {
		return err
	}
	if added.Suffrage == "" {
		_, err = fmt.Fprintf(a.stdout, "added node %s at %s\n", id, raftAddr)
	} else {
		_, err = fmt.Fprintf(a.stdout, "added node %s at %s as a %s\n", id, raftAddr, added.Suffrage)
	}
	return err
}

func removeNode(ctx context.Context, a *app, id string) error {
	c, err := a.adminClient()
	if err != nil {
		return err
	}
	body, err := c.do(ctx, http.MethodDelete, "/admin/v1/cluster/nodes/"+url.PathEscape(id), nil)
	if err != nil {
		return err
	}
	return a.printAnswer(body, "removed node %s\n", id)
}

// moveSlot sends the move and says what the meta group recorded.
func moveSlot(ctx context.Context, a *app, in map[string]any) error {
	c, err := a.adminClient()
	if err != nil {
		return err
	}
	body, err := c.do(ctx, http.MethodPost, "/admin/v1/cluster/slots/move", in)
	if err != nil {
		return err
	}
	if a.globals.json {
		return printRaw(a.stdout, body)
	}
	var m struct{ Slot, From, To int }
	if err := json.Unmarshal(body, &m); err != nil {
		return fmt.Errorf("unexpected answer: %w", err)
	}
	_, err = fmt.Fprintf(a.stdout, "slot %d is moving from group %d to group %d\n", m.Slot, m.From, m.To)
	return err
}

// transferLeadership sends {"id": id} and, for a sharded cluster's group
// (group >= 0), {"group": group}; no body at all when neither is given,
// which lets the leader pick any voter.
func transferLeadership(ctx context.Context, a *app, id string, group int) error {
	c, err := a.adminClient()
	if err != nil {
		return err
	}
	in := map[string]any{}
	if id != "" {
		in["id"] = id
	}
	if group >= 0 {
		in["group"] = group
	}
	var body []byte
	if len(in) > 0 {
		body, err = c.do(ctx, http.MethodPost, "/admin/v1/cluster/transfer", in)
	} else {
		body, err = c.do(ctx, http.MethodPost, "/admin/v1/cluster/transfer", nil)
	}
	if err != nil {
		return err
	}
	if a.globals.json {
		return printRaw(a.stdout, body)
	}
	what := "leadership"
	if group >= 0 {
		what = fmt.Sprintf("leadership of group %d", group)
	}
	if id == "" {
		_, err = fmt.Fprintf(a.stdout, "%s transferred\n", what)
	} else {
		_, err = fmt.Fprintf(a.stdout, "%s transferred to %s\n", what, id)
	}
	return err
}

// backup streams GET /admin/v1/backup into a temporary file beside path and
// moves it into place once it is complete, synced and starts with the backup
// magic. Without force an existing path is never replaced, even one created
// while the download ran.
func backup(ctx context.Context, a *app, path string, force bool) error {
	if !force {
		if err := refuseExisting(path); err != nil {
			return err
		}
	}
	c, err := a.adminTransferClient()
	if err != nil {
		return err
	}

	// The temporary file comes first, so a missing or read-only directory
	// fails before a long download rather than after it.
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("create temporary file: %w", err)
	}
	kept := false
	defer func() {
		if !kept {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Chmod(0o600); err != nil {
		return err
	}

	resp, err := c.send(ctx, http.MethodGet, "/admin/v1/backup", "", nil, -1, "application/octet-stream")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := errorFrom(resp); err != nil {
		return err
	}
	written, err := copyBackup(tmp, resp.Body)
	if err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("write %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", tmp.Name(), err)
	}
	if err := moveIntoPlace(tmp.Name(), path, force); err != nil {
		return err
	}
	kept = true
	syncDir(dir)

	if a.globals.json {
		out, err := json.Marshal(map[string]any{"file": path, "bytes": written})
		if err != nil {
			return err
		}
		return printRaw(a.stdout, out)
	}
	_, err = fmt.Fprintf(a.stdout, "wrote %d bytes to %s\n", written, path)
	return err
}

func refuseExisting(path string) error {
	_, err := os.Lstat(path)
	if err == nil {
		return fmt.Errorf("%s already exists; pass --force to overwrite it", path)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// copyBackup copies a backup body to w after checking that it starts with
// the backup magic, and returns how many bytes it wrote.
func copyBackup(w io.Writer, body io.Reader) (int64, error) {
	head := make([]byte, len(backupMagic))
	n, err := io.ReadFull(body, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return 0, fmt.Errorf("read backup: %w", err)
	}
	if n < len(head) || string(head) != backupMagic {
		return 0, fmt.Errorf("unexpected response from server: not a backup file (no %s header)", backupMagic)
	}
	if _, err := w.Write(head); err != nil {
		return 0, fmt.Errorf("write backup: %w", err)
	}
	rest, err := io.Copy(w, body)
	if err != nil {
		return 0, fmt.Errorf("write backup: %w", err)
	}
	return int64(n) + rest, nil
}

// moveIntoPlace renames tmp to path. Without force it links instead, which
// fails rather than replace a path that appeared meanwhile; a filesystem
// without hard links falls back to a checked rename.
func moveIntoPlace(tmp, path string, force bool) error {
	if force {
		return os.Rename(tmp, path)
	}
	err := os.Link(tmp, path)
	switch {
	case err == nil:
		os.Remove(tmp)
		return nil
	case errors.Is(err, fs.ErrExist):
		return fmt.Errorf("%s already exists; pass --force to overwrite it", path)
	}
	if err := refuseExisting(path); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// syncDir makes a rename in dir durable where the platform allows it.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// restore uploads a backup file as the raw body of POST /admin/v1/restore.
// The file is checked for the backup magic first, so a wrong path fails
// here instead of after a long upload.
func restore(ctx context.Context, a *app, path string) error {
	f, size, err := persistence.OpenSnapshotFile(path)
	if err != nil {
		return err
	}
	defer f.Close()
	c, err := a.adminTransferClient()
	if err != nil {
		return err
	}
	resp, err := c.send(ctx, http.MethodPost, "/admin/v1/restore", "application/octet-stream", io.NopCloser(f), size, "application/json")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := errorFrom(resp); err != nil {
		return err
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, responseBytesMax))
	if err != nil {
		return fmt.Errorf("POST /admin/v1/restore: read response: %w", err)
	}
	var answer struct {
		Restored bool `json:"restored"`
	}
	if err := decodeResponse(body, &answer); err != nil {
		return err
	}
	if !answer.Restored {
		return errors.New("unexpected response from server: restored is not true")
	}
	return a.printAnswer(body, "restored %s (%d bytes)\n", path, size)
}
