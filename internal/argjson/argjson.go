// Package argjson decodes the JSON a client sends (tool arguments, REST
// bodies) into Go values the way WorldForge's contract reads it:
//
//   - a key the Go type does not name, exactly and in the same letter case,
//     is dropped before decoding (or refused, in strict mode): encoding/json
//     would otherwise match it to a field case-insensitively, so that an
//     ignored "ID" could override a validated "id";
//   - an integral number written with a fraction or an exponent (7.0, 7e0,
//     -0.0) is accepted wherever an integer is, as JSON Schema's "integer"
//     accepts it;
//   - errors are worded for the client, a JSON path and what was expected,
//     never a Go type or package name.
//
// Values of free-form fields (interfaces, maps, json.RawMessage, types with
// their own UnmarshalJSON) are kept as they are.
package argjson

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Shape is the set of keys a Go type decodes from JSON, at every level.
type Shape struct {
	fields map[string]*Shape // an object: the keys named, each with its shape
	elem   *Shape            // an array: its elements' shape
	free   bool              // any value, kept as it is
}

var shapes sync.Map // reflect.Type → *Shape

// ShapeOf returns the shape of values of type t.
func ShapeOf(t reflect.Type) *Shape {
	if s, ok := shapes.Load(t); ok {
		return s.(*Shape)
	}
	s := shapeOf(t, map[reflect.Type]*Shape{})
	shapes.Store(t, s)
	return s
}

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

func shapeOf(t reflect.Type, seen map[reflect.Type]*Shape) *Shape {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if s, ok := seen[t]; ok {
		return s
	}
	pt := reflect.PointerTo(t)
	if t.Implements(unmarshalerType) || pt.Implements(unmarshalerType) ||
		t.Implements(textUnmarshalerType) || pt.Implements(textUnmarshalerType) {
		return &Shape{free: true}
	}
	switch t.Kind() {
	case reflect.Interface, reflect.Map:
		return &Shape{free: true}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return &Shape{} // base64 text
		}
		s := &Shape{}
		seen[t] = s
		s.elem = shapeOf(t.Elem(), seen)
		return s
	case reflect.Struct:
		s := &Shape{fields: map[string]*Shape{}}
		seen[t] = s
		addFields(s, t, seen)
		return s
	}
	return &Shape{}
}

// addFields adds the JSON keys of struct type t to s, those of embedded
// structs without a name of their own included.
func addFields(s *Shape, t reflect.Type, seen map[reflect.Type]*Shape) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				addFields(s, ft, seen)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		s.fields[name] = shapeOf(f.Type, seen)
	}
}

// Clean reports whether v, as encoding/json decodes a value into any,
// holds only keys that the shape names: then decoding it into the type
// needs no dropping of keys.
func (s *Shape) Clean(v any) bool {
	if s == nil || s.free {
		return true
	}
	switch v := v.(type) {
	case map[string]any:
		if s.fields == nil {
			return true
		}
		for k, e := range v {
			f, ok := s.fields[k]
			if !ok || !f.Clean(e) {
				return false
			}
		}
	case []any:
		if s.elem == nil {
			return true
		}
		for _, e := range v {
			if !s.elem.Clean(e) {
				return false
			}
		}
	}
	return true
}

// Options change how Decode reads.
type Options struct {
	// Strict refuses a key the shape does not name instead of dropping it.
	Strict bool
	// Prepare, when set, may change the decoded value (numbers are
	// json.Number) before it is decoded into the destination; an error of
	// its is returned as it is.
	Prepare func(v any) error
}

// Decode decodes data, one JSON value, into dst (a pointer), as the
// package doc says. An error is a *Error, or Prepare's.
func Decode(data []byte, dst any, opts Options) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return &Error{Msg: syntaxText(err)}
	}
	if dec.More() {
		return &Error{Msg: "more than one JSON value"}
	}
	shape := ShapeOf(reflect.TypeOf(dst))
	v, err := shape.rewrite(v, "", opts.Strict)
	if err != nil {
		return err
	}
	if opts.Prepare != nil {
		if err := opts.Prepare(v); err != nil {
			return err
		}
	}
	clean, err := json.Marshal(v)
	if err != nil {
		return &Error{Msg: "the value cannot be read"}
	}
	if err := json.Unmarshal(clean, dst); err != nil {
		return describe(err, reflect.TypeOf(dst))
	}
	return nil
}

// OutOfRange finds, in data (valid JSON), the first number beyond the
// range of a float64 (1e400), which encoding/json refuses to decode into
// any without saying where, and returns an *Error naming its path; nil
// when there is none.
func OutOfRange(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil
	}
	var find func(v any, path string) error
	find = func(v any, path string) error {
		switch x := v.(type) {
		case map[string]any:
			for _, k := range sortedKeys(x) {
				if err := find(x[k], join(path, k)); err != nil {
					return err
				}
			}
		case []any:
			for i, e := range x {
				if err := find(e, fmt.Sprintf("%s[%d]", path, i)); err != nil {
					return err
				}
			}
		case json.Number:
			if _, err := strconv.ParseFloat(string(x), 64); err != nil {
				if path == "" {
					path = "the value"
				}
				return &Error{Msg: fmt.Sprintf("%s: %s is out of range", path, x)}
			}
		}
		return nil
	}
	return find(v, "")
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// rewrite drops (or, strict, refuses) the keys s does not name and writes
// integral numbers as integers, below path.
func (s *Shape) rewrite(v any, path string, strict bool) (any, error) {
	if s == nil || s.free {
		return v, nil
	}
	switch x := v.(type) {
	case map[string]any:
		if s.fields == nil {
			return v, nil
		}
		for k, e := range x {
			f, ok := s.fields[k]
			if !ok {
				if strict {
					return nil, &Error{Msg: fmt.Sprintf("unknown field %q", join(path, k))}
				}
				delete(x, k)
				continue
			}
			e, err := f.rewrite(e, join(path, k), strict)
			if err != nil {
				return nil, err
			}
			x[k] = e
		}
	case []any:
		if s.elem == nil {
			return v, nil
		}
		for i, e := range x {
			e, err := s.elem.rewrite(e, fmt.Sprintf("%s[%d]", path, i), strict)
			if err != nil {
				return nil, err
			}
			x[i] = e
		}
	case json.Number:
		if n, ok := Integral(string(x)); ok {
			return json.Number(n), nil
		}
	}
	return v, nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// maxIntegerDigits bounds the integers Integral writes out: more digits
// than any Go integer holds (2^64 has 20) is out of every integer's range
// anyway, and so left as the client wrote it.
const maxIntegerDigits = 21

// Integral returns the decimal integer a JSON number stands for, without a
// fraction or exponent ("7" for 7.0, 7e0 or 70e-1; "0" for -0.0), and
// true, when the number is exactly an integer of at most 21 digits; else
// "", false. num must be a valid JSON number.
func Integral(num string) (string, bool) {
	neg, digits, shift, ok := integral(num)
	if !ok || len(digits)+shift > maxIntegerDigits {
		return "", false
	}
	digits += strings.Repeat("0", shift)
	if neg && digits != "0" {
		return "-" + digits, true
	}
	return digits, true
}

// integral reads a valid JSON number as sign, significant digits and a
// power of ten ≥ 0 to scale them by; ok is false when the number is not an
// integer (or its exponent is beyond ±9999, which no integer field holds).
func integral(num string) (neg bool, digits string, shift int, ok bool) {
	neg = strings.HasPrefix(num, "-")
	num = strings.TrimPrefix(num, "-")
	mant, exp, hasExp := strings.Cut(strings.ToLower(num), "e")
	intPart, frac, _ := strings.Cut(mant, ".")
	digits = strings.TrimLeft(intPart+frac, "0")
	if digits == "" {
		return false, "0", 0, true
	}
	shift = -len(frac)
	if hasExp {
		exp = strings.TrimPrefix(exp, "+")
		eneg := strings.HasPrefix(exp, "-")
		exp = strings.TrimLeft(strings.TrimPrefix(exp, "-"), "0")
		if len(exp) > 4 {
			return false, "", 0, false
		}
		e := 0
		for _, c := range exp {
			e = e*10 + int(c-'0')
		}
		if eneg {
			e = -e
		}
		shift += e
	}
	if shift < 0 {
		cut := len(digits) + shift
		if cut <= 0 || strings.TrimRight(digits[cut:], "0") != "" {
			return false, "", 0, false
		}
		digits, shift = digits[:cut], 0
	}
	return neg, digits, shift, true
}

// Error is a decoding failure, worded for the client.
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

// syntaxText words a JSON syntax error without encoding/json's prefix.
func syntaxText(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("not valid JSON at byte %d: %s", se.Offset, se.Error())
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return "not valid JSON: unexpected end of input"
	}
	return "not valid JSON"
}

// Describe words an encoding/json decoding error for the client: the JSON
// path of the value and what it should have been, never a Go type. Errors
// other than encoding/json's come back as "invalid value".
func Describe(err error) error { return describe(err, nil) }

// describe is Describe for a value decoded into root (a pointer type, or
// nil when unknown), which tells an array's item from the array.
func describe(err error, root reflect.Type) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		if field == "" {
			field = "the value"
		}
		if isItemOf(root, te.Field, te.Type) {
			field += ": each item"
		}
		want := kindText(te.Type)
		got, isNumber := strings.CutPrefix(te.Value, "number ")
		if isNumber && isFloat(te.Type) {
			return &Error{Msg: fmt.Sprintf("%s: %s is out of range", field, got)}
		}
		if isNumber && isInteger(te.Type) {
			if _, _, _, ok := integral(got); ok {
				return &Error{Msg: fmt.Sprintf("%s: %s is out of range", field, got)}
			}
			return &Error{Msg: fmt.Sprintf("%s must be an integer, not %s", field, got)}
		}
		if isNumber || te.Value == "number" {
			got = "a number"
		} else {
			got = article(te.Value)
		}
		return &Error{Msg: fmt.Sprintf("%s must be %s, not %s", field, want, got)}
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return &Error{Msg: syntaxText(err)}
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Msg: "invalid value"}
}

// isItemOf reports whether the value at path (JSON names joined by dots)
// in root is an array or slice whose items are of type item: encoding/json
// names an item's error by its array's path.
func isItemOf(root reflect.Type, path string, item reflect.Type) bool {
	t := root
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || path == "" {
		return false
	}
	for _, name := range strings.Split(path, ".") {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
			t = t.Elem() // encoding/json's paths leave out indexes
		}
		if t.Kind() != reflect.Struct {
			return false
		}
		f, ok := fieldByJSONName(t, name)
		if !ok {
			return false
		}
		t = f
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) && t.Elem() == item
}

// fieldByJSONName returns the type of the field of struct t that the JSON
// key name decodes into.
func fieldByJSONName(t reflect.Type, name string) (reflect.Type, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if tag == "-" {
			continue
		}
		if f.Anonymous && tag == "" {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				if r, ok := fieldByJSONName(ft, name); ok {
					return r, true
				}
				continue
			}
		}
		if tag == "" {
			tag = f.Name
		}
		if f.IsExported() && tag == name {
			return f.Type, true
		}
	}
	return nil, false
}

func isInteger(t reflect.Type) bool {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return false
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return true
	}
	return false
}

func isFloat(t reflect.Type) bool {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return false
	}
	// A number decoded into an interface is a float64.
	return t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64 || t.Kind() == reflect.Interface
}

// kindText names the JSON a Go type decodes from.
func kindText(t reflect.Type) string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return "a different value"
	}
	if isInteger(t) {
		return "an integer"
	}
	switch t.Kind() {
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return "a different value"
}

// article names a JSON kind as encoding/json reports it ("string",
// "object", "array", "bool").
func article(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "object":
		return "an object"
	case "array":
		return "an array"
	case "bool":
		return "a boolean"
	}
	return "a value of another type"
}
