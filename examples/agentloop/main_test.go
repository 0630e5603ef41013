package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestRun runs the whole loop against the real calculator server.
func TestRun(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"tool calc_add: [calc] Add two numbers.\n",
		`turn 1: calc_add({"a":2,"b":40}) -> {"tool_use_id":"toolu_1","content":[{"text":"42","type":"text"}],"type":"tool_result"}`,
		`"tool_use_id":"toolu_2","is_error":true`,
		"(INVALID_PARAMETERS)",
		"calc_multiply (TOOL_NOT_FOUND): no such tool",
		"turn 3: the model answers without calling a tool\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
