package persistence

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"

	"github.com/hashicorp/raft"
)

// Entry checksums. Neither log store checks an entry's bytes when it reads
// them back: raft-wal checks only the last batch of its tail segment, and
// bolt checks nothing. A damaged entry in the middle of the log then reads
// back as something else, and the FSM, which cannot apply what it cannot
// decode, stops the node with a panic. So every entry this node stores
// carries a CRC-32C of its own fields in front of its Extensions, written
// on the way to the disk and checked (and taken off) on the way back:
// raft, the log verifier and the cache above never see it, and a
// follower's entries carry the checksum its own store layer wrote, never
// the leader's.
//
// Entries written before checksums (older releases) have none and are
// read as they are; OpenStores checks those with Options.CheckEntry.

// entrySumMagic starts the Extensions of a checksummed entry. raft-wal's
// verifier, the only other writer of Extensions here, starts its own with
// a different 8-byte prefix (verifier.ExtensionMagicPrefix), so the two
// cannot be mistaken for each other.
var entrySumMagic = []byte("awsum\x00\x01\x00")

// entrySumHeaderBytes is the magic and the checksum.
var entrySumHeaderBytes = len(entrySumMagic) + 4

// ErrEntryChecksum means an entry read back does not match the checksum
// written with it.
var ErrEntryChecksum = errors.New("checksum mismatch: the entry's bytes changed on disk")

// entrySum is the checksum of an entry's index, term, type, data and the
// Extensions raft gave it.
func entrySum(l *raft.Log, extensions []byte) uint32 {
	var head [17]byte
	binary.BigEndian.PutUint64(head[0:8], l.Index)
	binary.BigEndian.PutUint64(head[8:16], l.Term)
	head[16] = byte(l.Type)
	sum := crc32.Update(0, castagnoli, head[:])
	sum = crc32.Update(sum, castagnoli, l.Data)
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(l.Data)))
	sum = crc32.Update(sum, castagnoli, n[:])
	return crc32.Update(sum, castagnoli, extensions)
}

// sealEntry returns a copy of l whose Extensions carry its checksum. l
// itself is left alone: raft keeps it in its cache and sends it on.
func sealEntry(l *raft.Log) *raft.Log {
	sealed := *l
	ext := make([]byte, entrySumHeaderBytes+len(l.Extensions))
	copy(ext, entrySumMagic)
	binary.BigEndian.PutUint32(ext[len(entrySumMagic):entrySumHeaderBytes], entrySum(l, l.Extensions))
	copy(ext[entrySumHeaderBytes:], l.Extensions)
	sealed.Extensions = ext
	return &sealed
}

// openEntry checks and removes the checksum of an entry read back. It
// reports whether the entry had one.
func openEntry(l *raft.Log) (bool, error) {
	if len(l.Extensions) < entrySumHeaderBytes || !bytes.Equal(l.Extensions[:len(entrySumMagic)], entrySumMagic) {
		return false, nil
	}
	want := binary.BigEndian.Uint32(l.Extensions[len(entrySumMagic):entrySumHeaderBytes])
	ext := l.Extensions[entrySumHeaderBytes:]
	if got := entrySum(l, ext); got != want {
		return true, fmt.Errorf("log entry %d: %w (stored %08x, read %08x)", l.Index, ErrEntryChecksum, want, got)
	}
	if len(ext) == 0 {
		ext = nil
	}
	l.Extensions = ext
	return true, nil
}

// summedLog is a log store whose entries carry checksums.
type summedLog struct {
	raft.LogStore
}

func (s summedLog) StoreLog(l *raft.Log) error { return s.LogStore.StoreLog(sealEntry(l)) }

func (s summedLog) StoreLogs(logs []*raft.Log) error {
	sealed := make([]*raft.Log, len(logs))
	for i, l := range logs {
		sealed[i] = sealEntry(l)
	}
	return s.LogStore.StoreLogs(sealed)
}

func (s summedLog) GetLog(index uint64, l *raft.Log) error {
	_, err := s.getLogSummed(index, l)
	return err
}

// getLogSummed reads an entry and reports whether it had a checksum.
func (s summedLog) getLogSummed(index uint64, l *raft.Log) (bool, error) {
	if err := s.LogStore.GetLog(index, l); err != nil {
		return false, err
	}
	if l.Index != index {
		return false, fmt.Errorf("log entry %d: the store returned entry %d", index, l.Index)
	}
	return openEntry(l)
}

// IsMonotonic passes on what the store beneath says: raft asks it of the
// store it is given, and raft-wal's answer (true) changes how raft
// removes a log after a snapshot install.
func (s summedLog) IsMonotonic() bool {
	m, ok := s.LogStore.(raft.MonotonicLogStore)
	return ok && m.IsMonotonic()
}
