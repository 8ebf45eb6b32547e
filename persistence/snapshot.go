package persistence

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash"
	"hash/crc32"
	"io"

	"github.com/addrwatch/addrwatch/actors"
)

// A snapshot is: the magic, a format byte, then per account a uvarint
// length and its JSON, then a zero length as terminator; format 2 adds a
// uvarint length and the cluster metadata (the node directory); last comes
// a CRC-32C of everything before it. The terminator and checksum let a
// restore tell a complete snapshot from a truncated or damaged one before
// loading it.
var snapshotMagic = []byte("AWSNAP")

const (
	snapshotFormatV1 byte = 1 // accounts only
	snapshotFormatV2 byte = 2 // accounts and cluster metadata
)

// snapshotAccountBytesMax bounds one account's encoding on read, so that
// a corrupt length cannot make a restore allocate without limit.
const snapshotAccountBytesMax = 256 << 20

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// SnapshotWriter streams accounts into a snapshot.
type SnapshotWriter struct {
	out io.Writer
	w   *bufio.Writer // writes to out and to crc
	crc hash.Hash32
	buf []byte
}

// NewSnapshotWriter writes the snapshot header to w.
func NewSnapshotWriter(w io.Writer) (*SnapshotWriter, error) {
	crc := crc32.New(castagnoli)
	sw := &SnapshotWriter{out: w, w: bufio.NewWriterSize(io.MultiWriter(w, crc), 64<<10), crc: crc}
	if _, err := sw.w.Write(append(append([]byte{}, snapshotMagic...), snapshotFormatV2)); err != nil {
		return nil, err
	}
	return sw, nil
}

// EncodeAccount encodes one account for a snapshot.
func EncodeAccount(a *actors.Account) ([]byte, error) { return json.Marshal(a) }

// WriteAccount appends one encoded account (from EncodeAccount).
func (sw *SnapshotWriter) WriteAccount(encoded []byte) error {
	if len(encoded) == 0 {
		return fmt.Errorf("persistence: empty account encoding")
	}
	sw.buf = binary.AppendUvarint(sw.buf[:0], uint64(len(encoded)))
	if _, err := sw.w.Write(sw.buf); err != nil {
		return err
	}
	_, err := sw.w.Write(encoded)
	return err
}

// Close writes the terminator, no cluster metadata and the checksum.
func (sw *SnapshotWriter) Close() error { return sw.CloseWithMeta(nil) }

// CloseWithMeta writes the terminator, the cluster metadata and the
// checksum, and flushes.
func (sw *SnapshotWriter) CloseWithMeta(meta []byte) error {
	if err := sw.w.WriteByte(0); err != nil {
		return err
	}
	sw.buf = binary.AppendUvarint(sw.buf[:0], uint64(len(meta)))
	if _, err := sw.w.Write(sw.buf); err != nil {
		return err
	}
	if _, err := sw.w.Write(meta); err != nil {
		return err
	}
	if err := sw.w.Flush(); err != nil {
		return err
	}
	_, err := sw.out.Write(binary.BigEndian.AppendUint32(nil, sw.crc.Sum32()))
	return err
}

// ReadSnapshot reads and checks a whole snapshot and decodes its accounts.
// Nothing is returned unless the checksum and every account decode.
func ReadSnapshot(r io.Reader) ([]*actors.Account, error) {
	accounts, _, err := ReadSnapshotWithMeta(r)
	return accounts, err
}

// ReadSnapshotWithMeta is ReadSnapshot that also returns the cluster
// metadata (nil in a format 1 snapshot).
func ReadSnapshotWithMeta(r io.Reader) ([]*actors.Account, []byte, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, nil, fmt.Errorf("persistence: read snapshot: %w", err)
	}
	head := len(snapshotMagic) + 1
	if len(data) < head+1+4 || string(data[:len(snapshotMagic)]) != string(snapshotMagic) {
		return nil, nil, fmt.Errorf("%w: not an addrwatch snapshot", ErrCorrupt)
	}
	format := data[len(snapshotMagic)]
	if format != snapshotFormatV1 && format != snapshotFormatV2 {
		return nil, nil, fmt.Errorf("%w: unknown snapshot format %d", ErrCorrupt, data[len(snapshotMagic)])
	}
	body, sum := data[:len(data)-4], binary.BigEndian.Uint32(data[len(data)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return nil, nil, fmt.Errorf("%w: snapshot checksum mismatch", ErrCorrupt)
	}
	rest := body[head:]
	var accounts []*actors.Account
	for {
		size, n := binary.Uvarint(rest)
		if n <= 0 {
			return nil, nil, fmt.Errorf("%w: bad account length", ErrCorrupt)
		}
		rest = rest[n:]
		if size == 0 {
			break
		}
		if size > snapshotAccountBytesMax || size > uint64(len(rest)) {
			return nil, nil, fmt.Errorf("%w: account length out of range", ErrCorrupt)
		}
		a := &actors.Account{}
		if err := json.Unmarshal(rest[:size], a); err != nil {
			return nil, nil, fmt.Errorf("%w: account %d: %v", ErrCorrupt, len(accounts), err)
		}
		accounts = append(accounts, a)
		rest = rest[size:]
	}
	var meta []byte
	if format == snapshotFormatV2 {
		size, n := binary.Uvarint(rest)
		if n <= 0 || size > uint64(len(rest)-n) {
			return nil, nil, fmt.Errorf("%w: bad cluster metadata length", ErrCorrupt)
		}
		if size > 0 {
			meta = rest[n : n+int(size)]
		}
		rest = rest[n+int(size):]
	}
	if len(rest) != 0 {
		return nil, nil, fmt.Errorf("%w: bytes after the last section", ErrCorrupt)
	}
	return accounts, meta, nil
}
