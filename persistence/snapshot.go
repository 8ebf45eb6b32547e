package persistence

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"runtime"
	"sync"

	"github.com/addrwatch/addrwatch/actors"
)

// A snapshot is: the magic, a format byte, then per account a uvarint
// length and its JSON, then a zero length as terminator; format 2 adds a
// uvarint length and the cluster metadata (the old node directory, empty
// in the snapshots nodes write now); last comes a CRC-32C of everything
// before it. The terminator and checksum let a restore tell a complete
// snapshot from a truncated or damaged one before loading it.
var snapshotMagic = []byte("AWSNAP")

const (
	snapshotFormatV1 byte = 1 // accounts only
	snapshotFormatV2 byte = 2 // accounts and cluster metadata
)

// snapshotAccountBytesMax bounds one account's encoding on read, so that
// a corrupt length fails at once. It must stay above the largest account
// the rules allow, or a node could not restore its own snapshot: since
// issue 13 an account may hold every idempotency record its principals'
// rate limits allow, some 35 million, up to about 265 GB in the worst
// case (actors/DESIGN.md). A corrupt length below the bound cannot make a
// restore allocate more than the snapshot holds: next grows its buffer
// with the bytes that arrive.
const snapshotAccountBytesMax = 1 << 40

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
	// The snapshot is read record by record rather than all at once: a
	// single buffer for hundreds of megabytes would be grown and zeroed
	// several times over, a tenth of a large restart.
	sr := &snapshotReader{r: bufio.NewReaderSize(r, 1<<20), crc: crc32.New(castagnoli)}
	head := sr.next(len(snapshotMagic) + 1)
	if sr.err != nil || string(head[:len(snapshotMagic)]) != string(snapshotMagic) {
		return nil, nil, sr.fail("not an addrwatch snapshot")
	}
	format := head[len(snapshotMagic)]
	if format != snapshotFormatV1 && format != snapshotFormatV2 {
		return nil, nil, fmt.Errorf("%w: unknown snapshot format %d", ErrCorrupt, format)
	}
	var records [][]byte
	for {
		size := sr.uvarint()
		if sr.err != nil {
			return nil, nil, sr.fail("bad account length")
		}
		if size == 0 {
			break
		}
		if size > snapshotAccountBytesMax {
			return nil, nil, fmt.Errorf("%w: account length out of range", ErrCorrupt)
		}
		rec := sr.next(int(size))
		if sr.err != nil {
			return nil, nil, sr.fail("account length out of range")
		}
		records = append(records, rec)
	}
	var meta []byte
	if format == snapshotFormatV2 {
		size := sr.uvarint()
		if sr.err != nil || size > snapshotAccountBytesMax {
			return nil, nil, sr.fail("bad cluster metadata length")
		}
		if size > 0 {
			if meta = sr.next(int(size)); sr.err != nil {
				return nil, nil, sr.fail("bad cluster metadata length")
			}
		}
	}
	var sum [4]byte
	if _, err := io.ReadFull(sr.r, sum[:]); err != nil {
		return nil, nil, sr.failWith(err, "truncated before its checksum")
	}
	if sr.crc.Sum32() != binary.BigEndian.Uint32(sum[:]) {
		return nil, nil, fmt.Errorf("%w: snapshot checksum mismatch", ErrCorrupt)
	}
	if _, err := sr.r.ReadByte(); err != io.EOF {
		if err != nil {
			return nil, nil, fmt.Errorf("persistence: read snapshot: %w", err)
		}
		return nil, nil, fmt.Errorf("%w: bytes after the checksum", ErrCorrupt)
	}
	accounts, err := decodeAccounts(records)
	if err != nil {
		return nil, nil, err
	}
	return accounts, meta, nil
}

// snapshotReader reads the sections of a snapshot and keeps the checksum
// of what it read. The first error sticks; later reads return nothing.
type snapshotReader struct {
	r   *bufio.Reader
	crc hash.Hash32
	err error
}

// next returns the next n bytes in a buffer of their own.
func (sr *snapshotReader) next(n int) []byte {
	if sr.err != nil {
		return nil
	}
	var b []byte
	if n <= snapshotChunk {
		b = make([]byte, n)
		_, sr.err = io.ReadFull(sr.r, b)
	} else {
		// A large length may be corrupt: grow with the data that
		// actually arrives instead of allocating it up front.
		var buf bytes.Buffer
		buf.Grow(snapshotChunk)
		var got int64
		got, sr.err = io.CopyN(&buf, sr.r, int64(n))
		if sr.err == nil && got != int64(n) {
			sr.err = io.ErrUnexpectedEOF
		}
		b = buf.Bytes()
	}
	if sr.err != nil {
		return nil
	}
	sr.crc.Write(b)
	return b
}

// snapshotChunk is the most a snapshot read allocates before the bytes
// it is for have arrived.
const snapshotChunk = 1 << 20

func (sr *snapshotReader) uvarint() uint64 {
	if sr.err != nil {
		return 0
	}
	v, err := binary.ReadUvarint(sr)
	if err != nil && sr.err == nil {
		// Truncated or overflowing: ReadByte kept any error from below.
		sr.err = ErrCorrupt
	}
	return v
}

// ReadByte reads one byte into the checksum, for binary.ReadUvarint. An
// error other than the end of the input is kept as the reader's error.
func (sr *snapshotReader) ReadByte() (byte, error) {
	c, err := sr.r.ReadByte()
	switch {
	case err == nil:
		sr.crc.Write([]byte{c})
	case !errors.Is(err, io.EOF):
		sr.err = err
	}
	return c, err
}

// fail reports a malformed or truncated snapshot as corrupt, and a read
// error from below as itself.
func (sr *snapshotReader) fail(what string) error { return sr.failWith(sr.err, what) }

func (sr *snapshotReader) failWith(err error, what string) error {
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, ErrCorrupt) {
		return fmt.Errorf("%w: %s", ErrCorrupt, what)
	}
	return fmt.Errorf("persistence: read snapshot: %w", err)
}

// decodeAccounts decodes snapshot records on every core: a restart of a
// node with many accounts is mostly this decoding. The error, if any, is
// that of the first record that fails, as a sequential decode would say.
func decodeAccounts(records [][]byte) ([]*actors.Account, error) {
	accounts := make([]*actors.Account, len(records))
	errs := make([]error, len(records))
	workers := min(runtime.GOMAXPROCS(0), len(records))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(records); i += workers {
				a := &actors.Account{}
				if err := unmarshalStored(records[i], a); err != nil {
					errs[i] = fmt.Errorf("%w: account %d: %v", ErrCorrupt, i, err)
					continue
				}
				accounts[i] = a
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return accounts, nil
}
