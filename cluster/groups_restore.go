package cluster

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/persistence"
)

// Restoring a backup into a sharded cluster. The file is a one-group
// backup (any cluster's, a sharded one's included: groups_backup.go). The
// meta leader checks it whole, splits its accounts by the directory into
// one file per group, and has each group's leader restore its file the
// way a one-group cluster restores (raft's user restore: the group's
// followers get it as a snapshot). A file for a group led elsewhere goes
// to its leader over a node connection (stream 'S'). The meta group's
// table of logins is then rebuilt from the accounts' logins. Each group's
// state is replaced whole, its slot state included; a slot mid-move would
// have no clear owner, so a restore waits until none moves.

// restoreFileBytesMax bounds a group's file sent over a node connection.
const restoreFileBytesMax = 16 << 30

// RestoreFile restores the backup at path into every group. Only the meta
// group's leader can (the edge forwards the request there).
func (g *Groups) RestoreFile(path string) error {
	if leads, _, _ := g.MetaLeader(); !leads {
		return ErrNotLeader
	}
	d, known := g.meta.directory()
	if !known {
		return ErrNoDirectory
	}
	if len(d.Moves) > 0 {
		return fmt.Errorf("%w: a restore waits until no slot is moving", ErrSlotMoving)
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	accounts, _, version, err := persistence.ReadSnapshotVersioned(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("cluster: backup %s: %w", path, err)
	}
	parts := make([][]*actors.Account, d.Groups)
	logins := map[string]loginReservation{}
	at := time.Now().UnixNano()
	for _, a := range accounts {
		parts[d.Slots[SlotOf(a.ID)]] = append(parts[d.Slots[SlotOf(a.ID)]], a)
		if a.Login != "" {
			logins[actors.FoldLogin(a.Login)] = loginReservation{Account: a.ID, At: at}
		}
	}
	for id, part := range parts {
		file, err := writeGroupFile(filepath.Dir(path), part, version)
		if err != nil {
			return err
		}
		err = g.restoreGroup(id, file)
		os.Remove(file)
		if err != nil {
			return fmt.Errorf("group %d: %w", id, err)
		}
	}
	return g.meta.propose(metaCommand{Op: "reset_logins", Logins: logins})
}

// writeGroupFile writes accounts as a one-group backup file in dir.
func writeGroupFile(dir string, accounts []*actors.Account, version actors.FeatureVersion) (string, error) {
	f, err := os.CreateTemp(dir, ".addrwatch-group-restore-*.snap")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sw, err := persistence.NewSnapshotWriterFor(f, version)
	if err == nil {
		for _, a := range accounts {
			var b []byte
			if b, err = persistence.EncodeAccount(a); err != nil {
				break
			}
			if err = sw.WriteAccount(b); err != nil {
				break
			}
		}
	}
	if err == nil {
		err = sw.Close()
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), f.Sync()
}

// restoreGroup has group id's leader restore file: this node when it
// leads the group, else the leader over a node connection.
func (g *Groups) restoreGroup(id int, file string) error {
	n := g.nodes[id]
	if n.serving() {
		return n.RestoreFile(file)
	}
	addr, known := n.Leader()
	if !known {
		return ErrNotLeader
	}
	f, size, err := persistence.OpenSnapshotFile(file)
	if err != nil {
		return err
	}
	defer f.Close()
	conn, err := g.conns.dialer.open(addr, streamRestore, metaRPCTimeout)
	if err != nil {
		return ErrNotLeader
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(restoreTimeout))
	head := binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint16(nil, uint16(id)), uint64(size))
	if _, err := conn.Write(head); err != nil {
		return err
	}
	if _, err := io.Copy(conn, f); err != nil {
		return err
	}
	var a metaAnswer
	if err := json.NewDecoder(io.LimitReader(conn, metaRPCBytesMax)).Decode(&a); err != nil {
		return err
	}
	if a.NotLeader {
		return ErrNotLeader
	}
	if a.Error != "" {
		return errors.New(a.Error)
	}
	return nil
}

// serveRestores restores the group files other nodes send this one.
func (g *Groups) serveRestores(ln net.Listener) {
	for {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		go g.answerRestore(conn)
	}
}

func (g *Groups) answerRestore(conn net.Conn) {
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(restoreTimeout))
	var head [10]byte
	if _, err := io.ReadFull(conn, head[:]); err != nil {
		return
	}
	id, size := int(binary.BigEndian.Uint16(head[:2])), binary.BigEndian.Uint64(head[2:])
	var a metaAnswer
	err := func() error {
		if id >= len(g.nodes) || size > restoreFileBytesMax {
			return fmt.Errorf("cluster: a restore of group %d, %d bytes", id, size)
		}
		f, err := os.CreateTemp(filepath.Join(g.cfg.DataDir, groupsDir), ".addrwatch-group-restore-*.snap")
		if err != nil {
			return err
		}
		defer os.Remove(f.Name())
		_, err = io.CopyN(f, conn, int64(size))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		return g.nodes[id].RestoreFile(f.Name())
	}()
	switch {
	case errors.Is(err, ErrNotLeader):
		a.NotLeader = true
	case err != nil:
		a.Error = err.Error()
	}
	json.NewEncoder(conn).Encode(a)
}
