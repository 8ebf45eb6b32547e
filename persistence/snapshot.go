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
// in the snapshots nodes write now); format 3 is format 2 with a uvarint
// feature version after the format byte, the highest one the state relies
// on (actors.FeatureVersion), written only when that is above 1 so that a
// release that knows only format 2 still reads every snapshot it could
// apply; last comes a CRC-32C of everything
// before it. The terminator and checksum let a restore tell a complete
// snapshot from a truncated or damaged one before loading it.
var snapshotMagic = []byte(SnapshotMagic)

// SnapshotMagic starts every snapshot, and so every backup file.
const SnapshotMagic = "AWSNAP"

const (
	snapshotFormatV1 byte = 1 // accounts only
	snapshotFormatV2 byte = 2 // accounts and cluster metadata
	snapshotFormatV3 byte = 3 // format 2 with a feature version
)

// ErrNewerRelease marks a snapshot whose state needs a feature version
// this release does not support: upgrade the node.
var ErrNewerRelease = errors.New("persistence: written by a newer release")

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

// NewSnapshotWriter writes the header of a snapshot whose state needs no
// feature beyond version 1 to w.
func NewSnapshotWriter(w io.Writer) (*SnapshotWriter, error) { return NewSnapshotWriterFor(w, 1) }

// NewSnapshotWriterFor writes the header of a snapshot whose state relies
// on feature version v.
func NewSnapshotWriterFor(w io.Writer, v actors.FeatureVersion) (*SnapshotWriter, error) {
	crc := crc32.New(castagnoli)
	sw := &SnapshotWriter{out: w, w: bufio.NewWriterSize(io.MultiWriter(w, crc), 64<<10), crc: crc}
	head := append([]byte{}, snapshotMagic...)
	if v <= 1 {
		head = append(head, snapshotFormatV2)
	} else {
		head = binary.AppendUvarint(append(head, snapshotFormatV3), uint64(v))
	}
	if _, err := sw.w.Write(head); err != nil {
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
	accounts, meta, _, err := ReadSnapshotVersioned(r)
	return accounts, meta, err
}

// ReadSnapshotVersioned is ReadSnapshotWithMeta that also returns the
// feature version the state relies on (1 before format 3). A version
// above this release's is ErrNewerRelease, before any account is decoded.
func ReadSnapshotVersioned(r io.Reader) ([]*actors.Account, []byte, actors.FeatureVersion, error) {
	accounts, meta, v, err := readSnapshot(r)
	return accounts, meta, v, err
}

func readSnapshot(r io.Reader) ([]*actors.Account, []byte, actors.FeatureVersion, error) {
	// The snapshot is read record by record rather than all at once: a
	// single buffer for hundreds of megabytes would be grown and zeroed
	// several times over, a tenth of a large restart.
	sr := &snapshotReader{r: bufio.NewReaderSize(r, 1<<20), crc: crc32.New(castagnoli)}
	head := sr.next(len(snapshotMagic) + 1)
	if sr.err != nil || string(head[:len(snapshotMagic)]) != string(snapshotMagic) {
		return nil, nil, 0, sr.fail("not an addrwatch snapshot")
	}
	format := head[len(snapshotMagic)]
	version := actors.FeatureVersion(1)
	switch format {
	case snapshotFormatV1, snapshotFormatV2:
	case snapshotFormatV3:
		v := sr.uvarint()
		if sr.err != nil || v < 2 || v > 1<<31 {
			return nil, nil, 0, sr.fail("bad feature version")
		}
		version = actors.FeatureVersion(v)
	default:
		return nil, nil, 0, fmt.Errorf("%w: unknown snapshot format %d", ErrCorrupt, format)
	}
	var records [][]byte
	for {
		size := sr.uvarint()
		if sr.err != nil {
			return nil, nil, 0, sr.fail("bad account length")
		}
		if size == 0 {
			break
		}
		if size > snapshotAccountBytesMax {
			return nil, nil, 0, fmt.Errorf("%w: account length out of range", ErrCorrupt)
		}
		rec := sr.next(int(size))
		if sr.err != nil {
			return nil, nil, 0, sr.fail("account length out of range")
		}
		records = append(records, rec)
	}
	var meta []byte
	if format != snapshotFormatV1 {
		size := sr.uvarint()
		if sr.err != nil || size > snapshotAccountBytesMax {
			return nil, nil, 0, sr.fail("bad cluster metadata length")
		}
		if size > 0 {
			if meta = sr.next(int(size)); sr.err != nil {
				return nil, nil, 0, sr.fail("bad cluster metadata length")
			}
		}
	}
	var sum [4]byte
	if _, err := io.ReadFull(sr.r, sum[:]); err != nil {
		return nil, nil, 0, sr.failWith(err, "truncated before its checksum")
	}
	if sr.crc.Sum32() != binary.BigEndian.Uint32(sum[:]) {
		return nil, nil, 0, fmt.Errorf("%w: snapshot checksum mismatch", ErrCorrupt)
	}
	if _, err := sr.r.ReadByte(); err != io.EOF {
		if err != nil {
			return nil, nil, 0, fmt.Errorf("persistence: read snapshot: %w", err)
		}
		return nil, nil, 0, fmt.Errorf("%w: bytes after the checksum", ErrCorrupt)
	}
	// Checked once the checksum holds, so a damaged byte is reported as
	// damage, not as a newer release.
	if version > actors.SupportedFeatureVersion() {
		return nil, nil, 0, fmt.Errorf("%w: the snapshot's state needs feature version %d, and this release supports up to %d: upgrade this node", ErrNewerRelease, version, actors.SupportedFeatureVersion())
	}
	accounts, err := decodeAccounts(records)
	if err != nil {
		return nil, nil, 0, err
	}
	return accounts, meta, version, nil
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
