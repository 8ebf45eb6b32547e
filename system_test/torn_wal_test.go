package system_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestTornWALTailRecovered tears the end of a follower's newest WAL
// segment, as a crash in the middle of an append would, and checks that
// the follower starts, drops only the torn batch, catches up from the
// leader and ends with the same state as the others. It does so once
// after a graceful stop and once after SIGKILL, on one three-node
// cluster, with writes made while the follower is down so that catching
// up is more than refilling the torn entries.
func TestTornWALTailRecovered(t *testing.T) {
	t.Parallel()
	nodes := startCluster(t, 3, "--raft-log", "wal")
	for _, s := range nodes {
		s.expectRaftLog("wal")
	}
	leader, followers := leaderAndFollowers(t, nodes)
	tenants, _ := owBulk(t, leader, 4, 3, 3, 2000)

	for i, kill := range []bool{false, true} {
		victim := followers[i]
		how := "graceful stop"
		if kill {
			how = "SIGKILL"
		}
		ftWaitConverged(t, nodes, how+": before the stop")
		if kill {
			victim.kill()
		} else {
			victim.stop()
		}
		segment, cut := tearWALTail(t, victim.Dir)
		t.Logf("%s: cut %s to %d bytes, inside its last entry", how, filepath.Base(segment), cut)
		// A process that dies in the middle of an append has not applied
		// that batch, so its data dir's record (raft-record.json) does not
		// count it yet. The tear here comes after the fact, over entries
		// the follower had applied and recorded, so the record is put back
		// where such a crash would have left it: at the bootstrap entry.
		// Left as it is, the start refuses (TestStartRefusesALogThatLost-
		// AcknowledgedWrites).
		recordReach(t, victim.Dir, 1)

		// Writes the follower misses while it is down.
		more, _ := owBulk(t, leader, 2, 2, 2, 3000+1000*i)
		tenants = append(tenants, more...)
		want := owCapture(t, leader, tenants)

		victim.start(victim.extra...)
		ftWaitConverged(t, nodes, how+": after the restart")
		if end := walDataEnd(t, segment); end <= cut {
			t.Fatalf("%s: the torn segment's data still ends at %d, the cut at %d: the follower appended nothing after recovering it", how, end, cut)
		}
		// Reads are answered by the leader from its own state: with the
		// torn follower leading, they read its copy.
		ftMakeLeader(t, nodes, ftHTTPClient(), slices.Index(nodes, victim))
		owCompare(t, how+": reads through the torn follower, leading", want, owCapture(t, victim, tenants))
		leader = victim
	}
}

// walFrame is one frame of a raft-wal segment file: where it starts, its
// type and its length on disk (header, payload and padding).
type walFrame struct {
	offset int64
	typ    byte
	size   int64
}

// raft-wal v0.4.0's segment format (segment/format.go): a 32-byte file
// header, then 8-byte aligned frames, each an 8-byte header (type in
// byte 0, then in bytes 4-7 the payload length, or for a commit frame a
// CRC) and its payload padded to 8 bytes. An append batch is its entry
// frames followed by one commit frame (no payload), written and synced
// together. The file is preallocated (64 MiB), so after the last frame
// come zeros: the data ends at the first all-zero frame header.
const (
	walFileHeaderLen  = 32
	walFrameHeaderLen = 8
	walFrameEntry     = 1
	walFrameIndex     = 2
	walFrameCommit    = 3
)

// walFrames reads the frames of a segment file up to the end of its data.
func walFrames(t *testing.T, path string) []walFrame {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var frames []walFrame
	var h [walFrameHeaderLen]byte
	for offset := int64(walFileHeaderLen); ; {
		if _, err := f.ReadAt(h[:], offset); errors.Is(err, io.EOF) {
			return frames
		} else if err != nil {
			t.Fatal(err)
		}
		fr := walFrame{offset: offset, typ: h[0], size: walFrameHeaderLen}
		switch fr.typ {
		case 0: // zeros: the end of the data
			return frames
		case walFrameEntry, walFrameIndex:
			n := int64(binary.LittleEndian.Uint32(h[4:]))
			fr.size += (n + walFrameHeaderLen - 1) / walFrameHeaderLen * walFrameHeaderLen
		case walFrameCommit:
		default:
			// What raft-wal's recovery also takes for the end: a frame
			// header torn by a crash, or the rest of an older frame that
			// a recovered append wrote over only in part.
			return frames
		}
		frames = append(frames, fr)
		offset += fr.size
	}
}

// walDataEnd is where the data of a segment file ends.
func walDataEnd(t *testing.T, path string) int64 {
	t.Helper()
	frames := walFrames(t, path)
	if len(frames) == 0 {
		return walFileHeaderLen
	}
	last := frames[len(frames)-1]
	return last.offset + last.size
}

// tearWALTail truncates the newest segment of the WAL in the data dir dir
// (its names sort by first index) to halfway through the payload of its
// last entry frame: the commit frame after that entry and the rest of the
// entry are gone, as if the process died while writing the batch. Cutting
// the file by a few bytes from its end would only shorten the zeros of
// its preallocation. It returns the segment and the length it was cut to.
func tearWALTail(t *testing.T, dir string) (string, int64) {
	t.Helper()
	segments, err := filepath.Glob(filepath.Join(dir, "wal", "*.wal"))
	if err != nil || len(segments) == 0 {
		t.Fatalf("no WAL segments under %s (%v)", dir, err)
	}
	segment := slices.Max(segments)
	frames := walFrames(t, segment)
	if len(frames) == 0 || frames[len(frames)-1].typ != walFrameCommit {
		t.Fatalf("%s: want frames ending in a commit, got %v", segment, frames)
	}
	var entry walFrame
	for _, f := range frames {
		if f.typ == walFrameEntry {
			entry = f
		}
	}
	if entry.size <= 2*walFrameHeaderLen {
		t.Fatalf("%s: the last entry frame %+v is too small to cut inside", segment, entry)
	}
	cut := entry.offset + walFrameHeaderLen + (entry.size-walFrameHeaderLen)/2
	if err := os.Truncate(segment, cut); err != nil {
		t.Fatal(err)
	}
	if end := walDataEnd(t, segment); end != entry.offset+entry.size {
		t.Fatalf("%s: after the cut the frames end at %d, want the torn entry's end %d", segment, end, entry.offset+entry.size)
	}
	return segment, cut
}

// recordReach writes the data dir's record of how far its log reaches.
func recordReach(t *testing.T, dir string, index uint64) {
	t.Helper()
	record := fmt.Sprintf(`{"version":1,"reaches":%d}`, index)
	if err := os.WriteFile(filepath.Join(dir, "raft-record.json"), []byte(record), 0o600); err != nil {
		t.Fatal(err)
	}
}
