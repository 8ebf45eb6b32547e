package actors

import (
	"encoding/json"
	"fmt"
)

// Level is an access level: the grant on a resource, the capability of an
// API key, and the effective access the spec reports.
type Level uint8

const (
	LevelNone Level = iota
	LevelRead
	LevelWrite
)

var levelNames = [...]string{LevelNone: "none", LevelRead: "read", LevelWrite: "write"}

func (l Level) String() string {
	if int(l) < len(levelNames) {
		return levelNames[l]
	}
	return fmt.Sprintf("level(%d)", l)
}

// ParseLevel parses "none", "read" or "write".
func ParseLevel(s string) (Level, bool) {
	for i, name := range levelNames {
		if name == s {
			return Level(i), true
		}
	}
	return LevelNone, false
}

// MarshalJSON refuses a level outside the three, so that nothing the
// decoder would reject can reach the log.
func (l Level) MarshalJSON() ([]byte, error) { return appendLevel(nil, l) }

func (l *Level) UnmarshalJSON(b []byte) error {
	s, err := jsonString(b)
	if err != nil {
		return err
	}
	v, ok := ParseLevel(s)
	if !ok {
		return fmt.Errorf("unknown access level %q", s)
	}
	*l = v
	return nil
}

// EffectiveAccess is the lower of the key's capability and the resource's
// grant: the key capability is a ceiling, never a source of access.
func EffectiveAccess(capability, grant Level) Level {
	return min(capability, grant)
}

// jsonString decodes a JSON string. The names and hex hashes in stored
// state need no unescaping, and a restart decodes millions of them, so
// those skip the general decoder; anything else goes through it.
func jsonString(b []byte) (string, error) {
	if len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"' && plainJSON(b[1:len(b)-1]) {
		return string(b[1 : len(b)-1]), nil
	}
	var s string
	err := json.Unmarshal(b, &s)
	return s, err
}
