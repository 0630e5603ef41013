package argjson

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestIntegral(t *testing.T) {
	for _, c := range []struct {
		num, want string
		ok        bool
	}{
		{"7", "7", true}, {"7.0", "7", true}, {"7e0", "7", true}, {"70e-1", "7", true},
		{"7.000E+0", "7", true}, {"-0.0", "0", true}, {"-0", "0", true}, {"0e99999", "0", true},
		{"-12.5e1", "-125", true}, {"1e20", "100000000000000000000", true},
		{"123456789012345678.0", "123456789012345678", true},
		{"7.5", "", false}, {"1e-7", "", false}, {"1e22", "", false}, {"1e400", "", false},
		{"1.0000000000000000001", "", false}, {"1e-99999", "", false},
	} {
		got, ok := Integral(c.num)
		if got != c.want || ok != c.ok {
			t.Errorf("Integral(%s) = %q, %v; want %q, %v", c.num, got, ok, c.want, c.ok)
		}
	}
}

type inner struct {
	X    int      `json:"x"`
	Tags []string `json:"tags,omitempty"`
}

type outer struct {
	ID    string  `json:"id"`
	N     *int64  `json:"n,omitempty"`
	F     float64 `json:"f,omitempty"`
	Cell  inner   `json:"cell"`
	Cells []inner `json:"cells,omitempty"`
	Doc   any     `json:"doc,omitempty"`
	Skip  string  `json:"-"`
}

// TestDecode: unknown keys (another letter case included) are dropped or,
// strict, refused; integral numbers decode into integers; free-form values
// keep their keys; errors name JSON paths and no Go types.
func TestDecode(t *testing.T) {
	var o outer
	err := Decode([]byte(`{"id":"a","ID":"b","Id":"c","n":7.0,"f":2,"cell":{"x":-0.0,"X":9,"z":1},"cells":[{"x":1e1,"q":1}],"doc":{"ID":1,"x":2.5},"Skip":"s","-":"t"}`), &o, Options{})
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := json.Marshal(o.Doc)
	if o.ID != "a" || o.N == nil || *o.N != 7 || o.F != 2 || o.Cell.X != 0 || len(o.Cells) != 1 || o.Cells[0].X != 10 ||
		string(doc) != `{"ID":1,"x":2.5}` || o.Skip != "" {
		t.Errorf("decoded %+v (doc %s)", o, doc)
	}

	err = Decode([]byte(`{"id":"a","cell":{"x":1,"X":2}}`), &o, Options{Strict: true})
	if err == nil || err.Error() != `unknown field "cell.X"` {
		t.Errorf("strict: %v", err)
	}

	for _, c := range []struct{ in, want string }{
		{`{"id":5}`, "id must be a string, not a number"},
		{`{"n":7.5}`, "n must be an integer, not 7.5"},
		{`{"n":1e20}`, "n: 100000000000000000000 is out of range"},
		{`{"n":1e400}`, "n: 1e400 is out of range"},
		{`{"n":"7"}`, "n must be an integer, not a string"},
		{`{"cell":{"x":true}}`, "cell.x must be an integer, not a boolean"},
		{`{"cell":[]}`, "cell must be an object, not an array"},
		{`{"cells":[{"tags":[1]}]}`, "cells.tags: each item must be a string, not a number"},
		{`{"f":"x"}`, "f must be a number, not a string"},
		{`{"id":"a"} {}`, "more than one JSON value"},
		{`{"id":`, "not valid JSON: unexpected end of input"},
		{`{"id" 1}`, "not valid JSON"},
	} {
		var o outer
		err := Decode([]byte(c.in), &o, Options{})
		var e *Error
		if !errors.As(err, &e) || !strings.Contains(e.Msg, c.want) {
			t.Errorf("%s: %v, want %q", c.in, err, c.want)
		}
		for _, bad := range []string{"Go ", "json:", "int64", "argjson."} {
			if err != nil && strings.Contains(err.Error(), bad) {
				t.Errorf("%s: %q names Go internals", c.in, err)
			}
		}
	}

	prepErr := errors.New("prepared")
	if err := Decode([]byte(`{"id":"a"}`), &o, Options{Prepare: func(any) error { return prepErr }}); err != prepErr {
		t.Errorf("Prepare's error: %v", err)
	}
}

func TestOutOfRange(t *testing.T) {
	err := OutOfRange([]byte(`{"a":[1,{"b":1e400}],"c":2}`))
	if err == nil || err.Error() != "a[1].b: 1e400 is out of range" {
		t.Errorf("got %v", err)
	}
	if err := OutOfRange([]byte(`{"a":1e300}`)); err != nil {
		t.Errorf("got %v", err)
	}
}

func TestClean(t *testing.T) {
	s := ShapeOf(jsonType[outer]())
	for in, want := range map[string]bool{
		`{"id":"a","cell":{"x":1}}`:          true,
		`{"id":"a","doc":{"any":1}}`:         true,
		`{"id":"a","ID":"b"}`:                false,
		`{"cells":[{"x":1},{"y":2}]}`:        false,
		`{"cell":{"x":1,"tags":["a"]}}`:      true,
		`{"cell":{"x":1,"tags":[{}]},"z":1}`: false,
	} {
		var v any
		if err := json.Unmarshal([]byte(in), &v); err != nil {
			t.Fatal(err)
		}
		if got := s.Clean(v); got != want {
			t.Errorf("Clean(%s) = %v", in, got)
		}
	}
}

func jsonType[T any]() reflect.Type { return reflect.TypeFor[T]() }
