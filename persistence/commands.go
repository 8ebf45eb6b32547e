package persistence

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/addrwatch/addrwatch/actors"
)

// entryFormatV1 is the only log-entry format so far.
const entryFormatV1 byte = 1

// entryCommandsMax bounds the commands one entry may claim, so a corrupt
// count cannot make the decoder allocate without limit.
const entryCommandsMax = 1 << 16

// wireCommand is a Command's JSON body on the log. EncodeCommand writes
// the payload in the same pass as the rest (P is actors.Payload), into the
// bytes a separate json.Marshal of it would give
// (TestEncodeCommandMatchesTwoPassEncoding). DecodeCommands reads it in
// one pass too (P is storedPayload): the record's kind, ahead of the JSON,
// already says what the payload is.
type wireCommand[P any] struct {
	Account     string                     `json:"a"`
	At          int64                      `json:"t"`
	Principal   actors.Principal           `json:"p"`
	Idempotency *actors.IdempotencyRequest `json:"i,omitempty"`
	Payload     P                          `json:"b"`
}

// EncodeCommands encodes a batch of commands as one log entry.
func EncodeCommands(cmds []*actors.Command) ([]byte, error) {
	records := make([][]byte, len(cmds))
	for i, c := range cmds {
		r, err := EncodeCommand(c)
		if err != nil {
			return nil, err
		}
		records[i] = r
	}
	return JoinCommands(records), nil
}

// EncodeCommand encodes one command as the record JoinCommands puts in an
// entry. Callers encode on their own goroutines, so a batch is only joined
// on the proposer's.
func EncodeCommand(c *actors.Command) ([]byte, error) {
	if c.Payload == nil {
		return nil, errors.New("persistence: encode command: no payload")
	}
	// Encoding into a pooled buffer, rather than with json.Marshal, saves
	// allocating the body once more than the record it is copied into.
	buf := encodeBuffers.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= encodeBufferKeptMax { // a 100-row PATCH's buffer is not worth keeping
			encodeBuffers.Put(buf)
		}
	}()
	buf.Reset()
	if err := json.NewEncoder(buf).Encode(wireCommand[actors.Payload]{Account: c.Account, At: c.At, Principal: c.Principal, Idempotency: c.Idempotency, Payload: c.Payload}); err != nil {
		return nil, fmt.Errorf("persistence: encode %T: %w", c.Payload, err)
	}
	body := bytes.TrimSuffix(buf.Bytes(), []byte("\n")) // Encode ends the value with a newline; Marshal does not
	record := make([]byte, 0, 1+binary.MaxVarintLen64+len(body))
	kindByte := byte(c.Payload.Kind())
	if c.Payload.Kind().Ignorable() {
		kindByte |= ignorableKind
	}
	record = append(record, kindByte)
	record = binary.AppendUvarint(record, uint64(len(body)))
	return append(record, body...), nil
}

// encodeBuffers holds the buffers EncodeCommand encodes into.
var encodeBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// encodeBufferKeptMax is the largest buffer put back in encodeBuffers.
const encodeBufferKeptMax = 64 << 10

// JoinCommands makes one log entry of records from EncodeCommand.
func JoinCommands(records [][]byte) []byte {
	size := 1 + binary.MaxVarintLen64
	for _, r := range records {
		size += len(r)
	}
	entry := make([]byte, 0, size)
	entry = append(entry, entryFormatV1)
	entry = binary.AppendUvarint(entry, uint64(len(records)))
	for _, r := range records {
		entry = append(entry, r...)
	}
	return entry
}

// ignorableKind is the bit of a record's kind byte that marks a command a
// node may skip when it does not know the kind (actors.Kind.Ignorable).
// Kinds stay below it.
const ignorableKind byte = 0x80

// ErrCorrupt marks bytes that are not a valid encoding.
var ErrCorrupt = errors.New("persistence: corrupt encoding")

// DecodeCommands decodes a log entry made by EncodeCommands.
func DecodeCommands(b []byte) ([]*actors.Command, error) {
	if len(b) == 0 || b[0] != entryFormatV1 {
		return nil, fmt.Errorf("%w: unknown log entry format", ErrCorrupt)
	}
	b = b[1:]
	count, n := binary.Uvarint(b)
	if n <= 0 || count > entryCommandsMax {
		return nil, fmt.Errorf("%w: bad command count", ErrCorrupt)
	}
	b = b[n:]
	cmds := make([]*actors.Command, 0, count)
	for range count {
		if len(b) == 0 {
			return nil, fmt.Errorf("%w: truncated entry", ErrCorrupt)
		}
		kind, ignorable := actors.Kind(b[0]&^ignorableKind), b[0]&ignorableKind != 0
		size, n := binary.Uvarint(b[1:])
		if n <= 0 || size > uint64(len(b)-1-n) {
			return nil, fmt.Errorf("%w: bad command length", ErrCorrupt)
		}
		body := b[1+n : 1+n+int(size)]
		b = b[1+n+int(size):]
		payload, known := actors.NewPayload(kind)
		switch {
		case !known && ignorable:
			continue // advisory, from a newer release: skipped (actors.Kind.Ignorable)
		case !known:
			return nil, fmt.Errorf("%w: unknown command kind %d (a newer release's? this one supports feature version %d)", ErrCorrupt, kind, actors.SupportedFeatureVersion())
		case ignorable != kind.Ignorable():
			return nil, fmt.Errorf("%w: command kind %d with the wrong ignorable flag", ErrCorrupt, kind)
		}
		w := wireCommand[storedPayload]{Payload: storedPayload{into: payload}}
		if err := unmarshalStored(body, &w); err != nil {
			return nil, fmt.Errorf("%w: command of kind %d: %v", ErrCorrupt, kind, err)
		}
		if !w.Payload.seen {
			return nil, fmt.Errorf("%w: command of kind %d has no payload", ErrCorrupt, kind)
		}
		cmds = append(cmds, &actors.Command{Account: w.Account, At: w.At, Principal: w.Principal, Idempotency: w.Idempotency, Payload: payload})
	}
	if len(b) != 0 {
		return nil, fmt.Errorf("%w: trailing bytes after commands", ErrCorrupt)
	}
	return cmds, nil
}

// entryFormatCluster marks a log entry that carries cluster metadata
// instead of account commands: in old logs, a leader announcing its
// addresses to the old node directory; in a sharded cluster's groups, the
// steps of a slot's move (cluster/slotmove.go).
const entryFormatCluster byte = 2

// EncodeClusterEntry makes a cluster metadata entry of body.
func EncodeClusterEntry(body []byte) []byte {
	return append([]byte{entryFormatCluster}, body...)
}

// ClusterEntry returns the body of a cluster metadata entry, or false when
// the entry carries account commands.
func ClusterEntry(b []byte) ([]byte, bool) {
	if len(b) > 0 && b[0] == entryFormatCluster {
		return b[1:], true
	}
	return nil, false
}
