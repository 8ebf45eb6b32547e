package actors

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strconv"
	"testing"
)

// viewStrings are the strings random views are made of: plain ASCII, and
// every kind of character encoding/json escapes or replaces.
var viewStrings = []string{
	"", "qezeode5wia5cfx2", "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq", "Cold vault",
	`say "hi"`, `back\slash`, "line\nbreak\ttab\r\x00\x1f\b\f", "<script>&amp;</script>",
	"naïve café ₿", "\u2028\u2029", "bad utf-8 \xff\xfe", "emoji 🙂", "\x7f",
}

// fillRandom sets every field of the struct v points to, recursively, to
// a random value: strings from viewStrings, small ints, levels and plans
// in range, pointers nil or set, slices nil, empty or not. A field added
// to a view later is filled too, so its appender must encode it.
func fillRandom(rng *rand.Rand, v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(viewStrings[rng.IntN(len(viewStrings))])
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(rng.Int64N(2001) - 1000)
	case reflect.Uint8:
		switch v.Type() {
		case reflect.TypeFor[Level]():
			v.SetUint(uint64(rng.IntN(len(levelNames))))
		case reflect.TypeFor[Plan]():
			v.SetUint(uint64(rng.IntN(len(planLimits))))
		default:
			v.SetUint(uint64(rng.IntN(256)))
		}
	case reflect.Bool:
		v.SetBool(rng.IntN(2) == 1)
	case reflect.Pointer:
		if rng.IntN(2) == 0 {
			v.SetZero()
			return
		}
		p := reflect.New(v.Type().Elem())
		fillRandom(rng, p.Elem())
		v.Set(p)
	case reflect.Slice:
		switch n := rng.IntN(5) - 1; {
		case n < 0:
			v.SetZero()
		default:
			s := reflect.MakeSlice(v.Type(), n, n)
			for i := range n {
				fillRandom(rng, s.Index(i))
			}
			v.Set(s)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			fillRandom(rng, v.Field(i))
		}
	default:
		panic("fillRandom: no rule for " + v.Type().String())
	}
}

func checkAppender[V JSONAppender](t *testing.T, rounds int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 11))
	for range rounds {
		var v V
		fillRandom(rng, reflect.ValueOf(&v).Elem())
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("json.Marshal(%+v): %v", v, err)
		}
		got, err := v.AppendJSON([]byte("prefix"))
		if err != nil {
			t.Fatalf("AppendJSON(%+v): %v", v, err)
		}
		if !bytes.Equal(got, append([]byte("prefix"), want...)) {
			t.Fatalf("AppendJSON(%+v)\n got %s\nwant prefix%s", v, got, want)
		}
	}
}

func TestAppendJSONMatchesEncodingJSON(t *testing.T) {
	t.Run("CardView", func(t *testing.T) { checkAppender[CardView](t, 2000) })
	t.Run("CardEnvelope", func(t *testing.T) { checkAppender[CardEnvelope](t, 2000) })
	t.Run("PortfolioListView", func(t *testing.T) { checkAppender[PortfolioListView](t, 2000) })
	t.Run("MeView", func(t *testing.T) { checkAppender[MeView](t, 2000) })
}

func TestAppendJSONRefusesWhatMarshalRefuses(t *testing.T) {
	bad := Level(9)
	for _, v := range []JSONAppender{
		CardView{EffectiveAccess: bad},
		CardView{Grant: &bad},
		CardEnvelope{Card: CardView{EffectiveAccess: bad}},
		PortfolioListView{Cards: []CardView{{}, {EffectiveAccess: bad}}},
		MeView{Capability: bad},
		MeView{Plan: Plan(9)},
	} {
		if _, err := json.Marshal(v); err == nil {
			t.Fatalf("json.Marshal(%+v) accepted an out-of-range value", v)
		}
		if _, err := v.AppendJSON(nil); err == nil {
			t.Errorf("AppendJSON(%+v) accepted an out-of-range value", v)
		}
	}
}

// FuzzAppendString checks the string appender against encoding/json on
// any input, valid UTF-8 or not.
func FuzzAppendString(f *testing.F) {
	for _, s := range viewStrings {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := appendString(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("appendString(%q) = %s, want %s", s, got, want)
		}
	})
}

func BenchmarkViewEncoding(b *testing.B) {
	list := PortfolioListView{Scope: "accessible_portfolio"}
	for i := range 10 {
		id := "qezeode5wia5cf" + strconv.Itoa(10+i)
		list.Cards = append(list.Cards, CardView{ID: id, Version: "v17", EffectiveAccess: LevelRead,
			Address: "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq", Name: "bench full portfolio", ColorKey: "teal"})
		list.IncludedCardIDs = append(list.IncludedCardIDs, id)
	}
	b.Run("list10/encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			json.Marshal(list)
		}
	})
	b.Run("list10/appender", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 4096)
		for b.Loop() {
			buf, _ = list.AppendJSON(buf[:0])
		}
	})
}

// FuzzJSONString checks the stored-string decoder against encoding/json on
// any input: the same string for a valid JSON string, an error otherwise.
func FuzzJSONString(f *testing.F) {
	for _, s := range viewStrings {
		enc, _ := json.Marshal(s)
		f.Add(enc)
	}
	f.Add([]byte(`"unterminated`))
	f.Add([]byte(`"a"b"`))
	f.Add([]byte(`12`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var want string
		wantErr := json.Unmarshal(b, &want)
		got, err := jsonString(b)
		if (err != nil) != (wantErr != nil) || err == nil && got != want {
			t.Fatalf("jsonString(%q) = %q, %v; encoding/json says %q, %v", b, got, err, want, wantErr)
		}
	})
}
