package mcpkit

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestFleet(t *testing.T) {
	t.Parallel()
	hf := newHTTPFixture(t)
	one, two, bad := newFixture(t, "one", fxNormal), newFixture(t, "two", fxNormal), newFixture(t, "bad", fxExitStart)
	phases := newPhaseLog()
	f := NewFleet([]ServerConfig{
		one.cfg, two.cfg, bad.cfg,
		{Name: "web", URL: hf.streamable.URL},
		{Name: "one", Command: "/ignored/duplicate"},
	}, &FleetOptions{Client: opts(func(o *ClientOptions) { o.OnPhase = phases.record })})
	defer f.Close()
	ctx := ctxTimeout(t, 60*time.Second)

	err := f.Start(ctx)
	if err == nil {
		t.Fatal("Start reported no failure")
	}
	if !errors.Is(err, &Error{Kind: FaultSpawnFailed}) || !errors.Is(err, ErrConfig) {
		t.Errorf("Start error = %v; want the spawn failure and the duplicate", err)
	}
	status := map[string]ServerStatus{}
	var order []string
	for _, st := range f.Status() {
		status[st.Name] = st
		order = append(order, st.Name)
	}
	if got := strings.Join(order, ","); got != "one,two,bad,web" {
		t.Errorf("servers = %s", got)
	}
	for _, name := range []string{"one", "two", "web"} {
		st := status[name]
		if st.Phase != PhaseReady || st.Tools == 0 || st.Resources != 1 || st.Prompts != 1 || st.Err != nil {
			t.Errorf("%s: %+v", name, st)
		}
	}
	if st := status["bad"]; st.Phase != PhaseFaulted || !errors.Is(st.Err, ErrConnectionFailed) {
		t.Errorf("bad: %+v", st)
	}
	if f.Client("one") == nil || f.Client("nope") != nil || len(f.Clients()) != 4 {
		t.Error("Client/Clients")
	}

	tools, err := f.ListAllTools(ctx)
	if err != nil || len(tools) != 3 || len(tools["web"]) == 0 {
		t.Errorf("ListAllTools = %d servers, %v", len(tools), err)
	}
	resources, err := f.ListAllResources(ctx)
	if err != nil || len(resources["one"]) != 1 {
		t.Errorf("ListAllResources = %v, %v", resources, err)
	}
	prompts, err := f.ListAllPrompts(ctx)
	if err != nil || len(prompts["two"]) != 1 {
		t.Errorf("ListAllPrompts = %v, %v", prompts, err)
	}
	res, err := f.Client("two").CallTool(ctx, "echo", map[string]any{"text": "via fleet"})
	if err != nil || resultText(res) != "via fleet" {
		t.Errorf("echo = %v, %v", res, err)
	}

	// Add with an existing name replaces it, closing the old process.
	oldTwo := f.Client("two")
	oldPids := fixturePids(t, two)
	two.cfg.Env["MCPKIT_FX_VALUE"] = "second"
	if err := f.Add(ctx, two.cfg); err != nil {
		t.Fatal(err)
	}
	if oldTwo.Phase() != PhaseClosed || f.Client("two") == oldTwo || f.Client("two").Phase() != PhaseReady {
		t.Error("Add did not replace two")
	}
	for _, pid := range oldPids {
		waitGone(t, pid)
	}
	res, _ = f.Client("two").CallTool(ctx, "env", map[string]any{"name": "MCPKIT_FX_VALUE"})
	if got := resultText(res); !strings.HasPrefix(got, "second|") {
		t.Errorf("replacement env = %q", got)
	}

	if !f.Remove("bad") || f.Remove("bad") {
		t.Error("Remove")
	}

	// Reload: one unchanged, two changed, web dropped, three new.
	unchanged, changed, dropped := f.Client("one"), f.Client("two"), f.Client("web")
	three := newFixture(t, "three", fxNormal)
	twoChanged := two.cfg
	twoChanged.Args = []string{"-test.v=false"}
	oneCopy := one.cfg
	oneCopy.Env = map[string]string{}
	for k, v := range one.cfg.Env {
		oneCopy.Env[k] = v
	}
	if err := f.Reload(ctx, []ServerConfig{oneCopy, twoChanged, three.cfg}); err != nil {
		t.Fatal(err)
	}
	if f.Client("one") != unchanged || unchanged.Phase() != PhaseReady || one.spawns() != 1 {
		t.Errorf("unchanged server touched: spawns %d, phase %s", one.spawns(), unchanged.Phase())
	}
	if f.Client("two") == changed || changed.Phase() != PhaseClosed || f.Client("two").Phase() != PhaseReady {
		t.Error("changed server not replaced")
	}
	if f.Client("web") != nil || dropped.Phase() != PhaseClosed {
		t.Error("dropped server still there")
	}
	if f.Client("three") == nil || f.Client("three").Phase() != PhaseReady {
		t.Error("new server not started")
	}

	var pids []int
	for _, fx := range []*fixture{one, two, three} {
		pids = append(pids, fixturePids(t, fx)...)
	}
	f.Close()
	f.Close()
	for _, c := range f.Clients() {
		if c.Phase() != PhaseClosed {
			t.Errorf("%s: %s after Close", c.Name(), c.Phase())
		}
	}
	for _, pid := range pids {
		waitGone(t, pid)
	}
	if err := f.Start(ctx); !errors.Is(err, ErrNotConnected) {
		t.Errorf("Start after Close = %v", err)
	}
}

// BenchmarkFleetConnect measures starting a fleet of n stdio servers in
// parallel (spawn, handshake, listing) and closing it.
func BenchmarkFleetConnect(b *testing.B) {
	// "normal" servers start in a few ms of CPU, so on a small machine ten
	// of them contend for the cores; "slowstart" ones spend 200 ms before
	// answering (loading, like most real servers), where a parallel start
	// should take about as long as the slowest server, not the sum.
	for _, kind := range []string{fxNormal, fxSlowStart} {
		for _, n := range []int{1, 10} {
			b.Run(fmt.Sprintf("%s/servers=%d", kind, n), func(b *testing.B) {
				benchFleetConnect(b, kind, n)
			})
		}
	}
}

func benchFleetConnect(b *testing.B, kind string, n int) {
	var cfgs []ServerConfig
	for i := range n {
		cfgs = append(cfgs, newFixture(b, fmt.Sprintf("s%d", i), kind).cfg)
	}
	for b.Loop() {
		f := NewFleet(cfgs, &FleetOptions{Client: opts()})
		if err := f.Start(context.Background()); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		f.Close()
		b.StartTimer()
	}
}
