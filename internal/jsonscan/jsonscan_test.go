package jsonscan

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// scanSeeds are edge cases of JSON text, valid and not: FuzzScan's seed
// corpus and TestScanSeeds' table.
var scanSeeds = []string{
	``, ` `, `0`, `-0`, `01`, `-01`, `-`, `--1`, `+1`, `.5`, `1.`, `1.5`, `1.5e`, `1e5`, `1E+5`, `1e-05`,
	`1e+`, `12x`, `1 2`, `1.5.5`, `0x10`, `1e999`, `-12345678901234567890`,
	`true`, `tru`, `truex`, `false`, `fals`, `null`, `nul`, `null `, `NULL`, `nan`,
	`""`, `"`, `"a`, `"a"`, `"a\"b"`, `"\\"`, `"\\\"`, `"\/"`, `"\'"`, `"\q"`, `"\u00e9"`, `"\u00E9"`, `"\u12"`,
	`"\u12g4"`, `"\ud800"`, `"\ud83d\ude00"`, `"\ud800\u0041"`, `"\udc00\ud800"`, `"\ud800\ud800"`, `"\ud800x"`,
	"\"\xff\"", "\"\xc3\"", "\"\xe2\x82\"", "\"a\x01b\"", "\"tab\there\"", "\"\x7f\"", "\"é\"",
	`{}`, ` { } `, `{"a":1}`, `{"a":1,"a":2}`, `{"a":1,}`, `{"a" 1}`, `{"a":}`, `{,}`, `{"a"}`, `{a:1}`,
	`{"a":1 "b":2}`, `{"a":[1,{"b":"}"}]}`, `{"a":1} x`, `{"a":1}{}`, `{"a":1}}`, `{"\u0061":1,"a":2}`,
	`{"a":[1}}`, `{"a":{]}`, `{"a":"\q"}`, `{"a":01}`, `{"a":1:2}`, `{"a"::1}`, `{"\q":1}`, "{\"\x01\":1}",
	`{"a":tru}`, `{"a":"b\"c"}`, `{"a":"\\"}`, `{"":0}`, `{"a" : [ ] , "b" : { } }`,
	"\t{\n\"a\"\r:\n1\t}\n", "\xef\xbb\xbf{}", "{\"a\":1}\x00", `{"a":1`, `{"a"`, `{`, `}`,
	`[]`, `[1,]`, `[,1]`, `[[]]`, `[1 2]`, `[}`, `[1,[2,[3]]]`, `["a",{"b":[]}]`, `[`, `]`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{}}}`,
	`[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]`,
}

// deepSeeds are nested to encoding/json's limit and one past it: in
// TestScanSeeds, not in the fuzz corpus, where the fuzzer's minimizing of
// inputs this large stalls a short run.
var deepSeeds = []string{
	strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth),
	strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1),
	`{"a":` + strings.Repeat("[", MaxDepth-1) + strings.Repeat("]", MaxDepth-1) + `}`,
	`{"a":` + strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth) + `}`,
}

func TestScanSeeds(t *testing.T) {
	for _, s := range append(scanSeeds, deepSeeds...) {
		checkScan(t, []byte(s))
	}
}

func FuzzScan(f *testing.F) {
	for _, s := range scanSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkScan)
}

// checkScan holds the scanner to encoding/json on data: validity, where a
// value ends (from every offset), an object's members and Lookup, and
// Unquote; and Loose to Strict on what encoding/json accepts.
func checkScan(t *testing.T, data []byte) {
	valid := json.Valid(data)
	if got := Strict.Valid(data); got != valid {
		t.Fatalf("Strict.Valid(%q) = %v, json.Valid %v", data, got, valid)
	}
	if valid && !Loose.Valid(data) {
		t.Fatalf("Loose.Valid(%q) = false, json.Valid true", data)
	}

	// Where a value ends, from each offset a value could start at (the
	// first few of a long input).
	offsets := 64
	if len(data) > 1024 {
		offsets = 4
	}
	for i := 0; i < len(data) && i < offsets; i++ {
		if IsSpace(data[i]) {
			continue
		}
		end, err := Strict.Skip(data, i)
		dec := json.NewDecoder(bytes.NewReader(data[i:]))
		var raw json.RawMessage
		derr := dec.Decode(&raw)
		if (err == nil) != (derr == nil) {
			t.Fatalf("Strict.Skip(%q, %d) = %d, %v; json.Decoder: %v", data, i, end, err, derr)
		}
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Strict.Skip(%q, %d): %T is not a *SyntaxError", data, i, err)
			}
			continue
		}
		if want := i + int(dec.InputOffset()); end != want {
			t.Fatalf("Strict.Skip(%q, %d) = %d, json.Decoder ends the value at %d", data, i, end, want)
		}
		// Loose ends a number or literal at a delimiter, not where it stops
		// being one: the two agree on a valid value delimited as in valid
		// text.
		if json.Valid(data[i:end]) && (end == len(data) || strings.IndexByte(" \t\r\n,:]}", data[end]) >= 0) {
			if lend, err := Loose.Skip(data, i); err != nil || lend != end {
				t.Fatalf("Loose.Skip(%q, %d) = %d, %v; Strict: %d", data, i, lend, err, end)
			}
		}
		if data[i] == '"' {
			send, _, serr := Strict.String(data, i)
			lend, _, lerr := Loose.String(data, i)
			if serr != nil || send != end || lerr != nil || lend != end {
				t.Fatalf("String(%q, %d): Strict %d, %v; Loose %d, %v; Skip %d", data, i, send, serr, lend, lerr, end)
			}
		}
	}

	trimmed := TrimSpace(data)

	// Strings.
	if len(trimmed) > 0 && trimmed[0] == '"' {
		got, err := Unquote(trimmed)
		var want string
		werr := json.Unmarshal(trimmed, &want)
		if (err == nil) != (werr == nil) || got != want {
			t.Fatalf("Unquote(%q) = %q, %v; json.Unmarshal: %q, %v", trimmed, got, err, want, werr)
		}
		if err == nil {
			if p, ok := PlainString(trimmed); ok && string(p) != want {
				t.Fatalf("PlainString(%q) = %q, the value is %q", trimmed, p, want)
			}
		}
	}

	// Objects.
	sms, serr := Strict.Split(data)
	lms, lerr := Loose.Split(data)
	if serr == nil && !valid {
		t.Fatalf("Strict.Split(%q) succeeded on text encoding/json refuses", data)
	}
	if len(trimmed) == 0 || trimmed[0] != '{' {
		if !errors.Is(serr, ErrNotObject) || !errors.Is(lerr, ErrNotObject) {
			t.Fatalf("Split(%q): Strict %v, Loose %v; want ErrNotObject", data, serr, lerr)
		}
		return
	}
	if serr != nil {
		return
	}
	if lerr != nil || len(lms) != len(sms) {
		t.Fatalf("Loose.Split(%q) = %d members, %v; Strict %d", data, len(lms), lerr, len(sms))
	}
	for k := range sms {
		if !bytes.Equal(sms[k].RawKey, lms[k].RawKey) || !bytes.Equal(sms[k].Value, lms[k].Value) {
			t.Fatalf("Split(%q) member %d: Strict %s:%s, Loose %s:%s", data, k, sms[k].RawKey, sms[k].Value, lms[k].RawKey, lms[k].Value)
		}
	}
	// The members as encoding/json's tokenizer reads them.
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	n := 0
	for ; dec.More(); n++ {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			t.Fatal(err)
		}
		if n >= len(sms) {
			t.Fatalf("Split(%q) has %d members, encoding/json reads more", data, len(sms))
		}
		m := sms[n]
		if key := tok.(string); m.Key() != key || !m.KeyIs(key) {
			t.Fatalf("Split(%q) member %d: key %q, encoding/json reads %q", data, n, m.Key(), key)
		}
		if k, err := Unquote(m.RawKey); err != nil || k != m.Key() {
			t.Fatalf("Unquote(%q) = %q, %v; Key %q", m.RawKey, k, err, m.Key())
		}
		if !bytes.Equal(m.Value, raw) {
			t.Fatalf("Split(%q) member %d: value %s, encoding/json reads %s", data, n, m.Value, raw)
		}
	}
	if n != len(sms) {
		t.Fatalf("Split(%q) has %d members, encoding/json reads %d", data, len(sms), n)
	}
	// Lookup finds what json.Unmarshal keeps of each key.
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		t.Fatal(err)
	}
	for key, want := range obj {
		for _, mode := range []Mode{Strict, Loose} {
			v, ok, err := mode.Lookup(data, key)
			if err != nil || !ok || !bytes.Equal(v, want) {
				t.Fatalf("Lookup(%q, %q) = %s, %v, %v; encoding/json keeps %s", data, key, v, ok, err, want)
			}
		}
	}
	if _, ok, err := Strict.Lookup(data, "\x00absent"); ok || err != nil {
		t.Fatalf("Lookup(%q) of an absent key = %v, %v", data, ok, err)
	}
}

func TestMembersErrors(t *testing.T) {
	for _, tc := range []struct {
		in          string
		strict, lax string // "" ok, "not" ErrNotObject, "syntax"
	}{
		{`{"a":1}`, "", ""},
		{`[1]`, "not", "not"},
		{``, "not", "not"},
		{`{"a":"\q"}`, "syntax", ""},
		{`{"a":01}`, "syntax", ""},
		{`{"a":[1}}`, "syntax", ""},
		{`{"a":1:2}`, "syntax", "syntax"},
		{`{"\q":1}`, "syntax", "syntax"},
		{`{"a":1} x`, "syntax", "syntax"},
		{`{"a":1,}`, "syntax", "syntax"},
	} {
		for _, c := range []struct {
			mode Mode
			want string
		}{{Strict, tc.strict}, {Loose, tc.lax}} {
			_, err := c.mode.Split([]byte(tc.in))
			var se *SyntaxError
			got := ""
			switch {
			case errors.Is(err, ErrNotObject):
				got = "not"
			case errors.As(err, &se):
				got = "syntax"
			case err != nil:
				got = err.Error()
			}
			if got != c.want {
				t.Errorf("mode %d: Split(%s) error %v, want %q", c.mode, tc.in, err, c.want)
			}
		}
	}
}

func TestLookup(t *testing.T) {
	doc := []byte(`{"runtime":{"x":1},"n\u0061me":"a","name":"b","grid":null}`)
	for _, tc := range []struct {
		key, val string
		found    bool
	}{
		{"runtime", `{"x":1}`, true},
		{"name", `"b"`, true},
		{"grid", `null`, true},
		{"nope", ``, false},
	} {
		v, ok, err := Strict.Lookup(doc, tc.key)
		if err != nil || ok != tc.found || string(v) != tc.val {
			t.Errorf("Lookup(%q) = %s, %v, %v; want %s, %v", tc.key, v, ok, err, tc.val, tc.found)
		}
	}
	if _, _, err := Strict.Lookup([]byte(`[1]`), "a"); !errors.Is(err, ErrNotObject) {
		t.Errorf("Lookup of an array: %v, want ErrNotObject", err)
	}
}

func TestMembersNoAlloc(t *testing.T) {
	doc := []byte(`{"name":"read_world","arguments":{"world_id":"w-1","x":[1,2,{"y":"]"}]},"_meta":{"progressToken":7}}`)
	for _, mode := range []Mode{Strict, Loose} {
		n := testing.AllocsPerRun(100, func() {
			it := mode.Members(doc)
			for it.Next() {
				_ = it.Member().KeyIs("name")
			}
			if it.Err() != nil {
				t.Fatal(it.Err())
			}
		})
		if n != 0 {
			t.Errorf("mode %d: %v allocations per scan, want 0", mode, n)
		}
	}
}

func BenchmarkSkip(b *testing.B) {
	doc := []byte(`{"name":"read_world","arguments":{"world_id":"w-1","limit":50,"q":"a \"quoted\" word","tags":["x","y"]},"_meta":{"progressToken":7}}`)
	for _, c := range []struct {
		name string
		mode Mode
	}{{"Strict", Strict}, {"Loose", Loose}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			for b.Loop() {
				if _, err := c.mode.Skip(doc, 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
