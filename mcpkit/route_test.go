package mcpkit

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

var peekSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hello"}]}}`,
	`{"jsonrpc":"2.0","id":"a","error":{"code":-32602,"message":"unknown tool"}}`,
	`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"x-1","progress":1}}`,
	`{"jsonrpc":"2.0","id":7,"method":"sampling/createMessage","params":{"messages":[],"maxTokens":5}}`,
	` { "result" : {"method":"not this one","id":[1,{"x":"}"}]} , "jsonrpc" : "2.0" , "id" : 3 } `,
	`{"jsonrpc":"2.0","id":null,"result":{}}`,
	`{"jsonrpc":"2.0","result":{"text":"a \"quoted\" \\ string"},"id":9}`,
	`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"a\nb"}}`,
	`{"jsonrpc":"2.0","\u006dethod":"notifications/message","params":{}}`,
	`{"jsonrpc":"2.0","method":"notifications\/message","params":{}}`,
	`{"jsonrpc":"2.0","method":5}`,
	`{"jsonrpc":"2.0","Method":"notifications/progress","ID":null,"params":{}}`,
	`{"jsonrpc":"2.0","method":"\x80"}`,
	`{}`,
	`[]`,
	`{"id":1,`,
	`{"id":1 "x":2}`,
	`not json`,
}

// checkPeek checks peekMessage against the go-sdk's decoder: whatever the
// decoder reads as a message, the peek either makes out the same or
// gives up.
func checkPeek(t *testing.T, data []byte) {
	method, hasMethod, hasID, ok := peekMessage(data)
	msg, err := jsonrpc.DecodeMessage(data)
	if err != nil || !ok {
		return
	}
	switch m := msg.(type) {
	case *jsonrpc.Request:
		if !hasMethod || method != m.Method {
			t.Errorf("%s: peek = method %q (%v), decoder: request %q", data, method, hasMethod, m.Method)
		}
	case *jsonrpc.Response:
		if hasMethod || !hasID {
			t.Errorf("%s: peek = method %q (%v), id %v; decoder: response", data, method, hasMethod, hasID)
		}
	}
}

func TestPeekMessage(t *testing.T) {
	for _, s := range peekSeeds {
		checkPeek(t, []byte(s))
	}
	for _, tc := range []struct {
		in                   string
		method               string
		hasMethod, hasID, ok bool
	}{
		{peekSeeds[0], "", false, true, true},
		{peekSeeds[2], "notifications/progress", true, false, true},
		{peekSeeds[4], "", false, true, true},
		{peekSeeds[5], "", false, false, true},
		{peekSeeds[6], "", false, true, true},
		{`{"jsonrpc":"2.0","\u006dethod":"notifications/message","params":{}}`, "", false, false, false},
		{`{"jsonrpc":"2.0","method":"notifications\/message","params":{}}`, "", false, false, false},
		{`{"Method":"notifications/progress","Id":2}`, "notifications/progress", true, true, true},
		{`{"id":1,`, "", false, false, false},
		{`{"id":1 "x":2}`, "", false, false, false},
	} {
		method, hasMethod, hasID, ok := peekMessage([]byte(tc.in))
		if method != tc.method || hasMethod != tc.hasMethod || hasID != tc.hasID || ok != tc.ok {
			t.Errorf("peekMessage(%s) = %q, %v, %v, %v; want %q, %v, %v, %v", tc.in, method, hasMethod, hasID, ok, tc.method, tc.hasMethod, tc.hasID, tc.ok)
		}
	}
}

func FuzzPeekMessage(f *testing.F) {
	for _, s := range peekSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkPeek(t, data) })
}
