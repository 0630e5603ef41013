package bench

import (
	"encoding/json"
	"strings"
	"testing"
)

// quickCases are messages quickAccept must accept (true) or leave to
// encoding/json (false); for every one, an accepted message is one
// checkRPCResponse accepts too.
var quickCases = []struct {
	msg  string
	want bool
}{
	{`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{\"a\":1}"}]}}`, true},
	{` {"jsonrpc" : "2.0" , "id" : "x" , "result" : { } , "error" : null } `, true},
	{`{"jsonrpc":"2.0","id":null,"result":[1,-2.5e+3,0,true,false,null,"\u00e9\n"]}`, true},
	{`{"result":1,"extra":{"deep":[[[]]]}}`, true},
	{`{"jsonrpc":"2.0","id":1,"result":null}`, false},
	{`{"jsonrpc":"2.0","id":1}`, false},
	{`{}`, false},
	{`{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}`, false},
	{`{"jsonrpc":"2.0","id":1,"result":{"isError":true,"content":[]}}`, false},
	{`{"jsonrpc":"2.0","id":1,"result":{"isError":false}}`, false},
	{`{"jsonrpc":2,"id":1,"result":{}}`, false},
	{`{"jsonrpc":"2.0","id":1,"Result":{}}`, false},
	{`{"jsonrpc":"2.0","id":1,"res\u0075lt":{}}`, false},
	{`{"jsonrpc":"2.0","id":1,"result":{}`, false},
	{`{"jsonrpc":"2.0","id":1,"result":{}}x`, false},
	{`{"jsonrpc":"2.0","id":01,"result":{}}`, false},
	{`{"jsonrpc":"2.0","id":1,"result":"a` + "\x01" + `"}`, false},
	{`{"jsonrpc":"2.0","id":1,"result":"\x"}`, false},
	{`{"jsonrpc":"2.0","id":1,"result":"\u12g4"}`, false},
	{`{"jsonrpc":"2.0","id":1,"result":{"a":1,}}`, false},
	{`{"jsonrpc":"2.0","id":1,"result":[1,]}`, false},
	{`{"jsonrpc":"2.0","id":1,"result":-}`, false},
	{`{"jsonrpc":"2.0","id":1,"result":1.}`, false},
	{`{"jsonrpc":"2.0","id":1,"result":1e}`, false},
	{`{"jsonrpc":"2.0","id":1,"result":tru}`, false},
	{`[]`, false},
	{``, false},
}

func TestQuickAccept(t *testing.T) {
	for _, tc := range quickCases {
		if got := quickAccept([]byte(tc.msg)); got != tc.want {
			t.Errorf("quickAccept(%s) = %v, want %v", tc.msg, got, tc.want)
		}
		if tc.want {
			if err := checkRPCResponse([]byte(tc.msg)); err != nil {
				t.Errorf("%s: accepted, but checkRPCResponse says %v", tc.msg, err)
			}
		}
	}
	deep := `{"result":` + strings.Repeat("[", maxQuickDepth+1) + strings.Repeat("]", maxQuickDepth+1) + `}`
	if quickAccept([]byte(deep)) {
		t.Error("accepted a message deeper than maxQuickDepth")
	}
	// A real answer of the raw handler is taken by the quick path.
	text, _ := json.Marshal(BaselinePayload())
	msg := `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":` + string(text) + `}]}}`
	if !quickAccept([]byte(msg)) {
		t.Error("the raw handler's answer is not accepted by the quick path")
	}
}

// FuzzQuickAccept: whatever quickAccept accepts, checkRPCResponse (the
// encoding/json check) accepts too, and a valid JSON message that
// quickAccept accepts is valid JSON.
func FuzzQuickAccept(f *testing.F) {
	for _, tc := range quickCases {
		f.Add([]byte(tc.msg))
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		if !quickAccept(msg) {
			return
		}
		if !json.Valid(msg) {
			t.Fatalf("accepted invalid JSON %q", msg)
		}
		if err := checkRPCResponse(msg); err != nil {
			t.Fatalf("accepted %q, which checkRPCResponse refuses: %v", msg, err)
		}
	})
}

func BenchmarkDefaultVerify(b *testing.B) {
	text, _ := json.Marshal(BaselinePayload())
	body := []byte(`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":` + string(text) + `}]}}`)
	h := ToolCallHeaders("", "")
	h.Set("Content-Type", "application/json")
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if err := DefaultVerify(200, h, body); err != nil {
			b.Fatal(err)
		}
	}
}
