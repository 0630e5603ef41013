package mcpkit

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func textResource(uri, text string) Resource {
	return Resource{URI: uri, Name: "n-" + uri, MIMEType: "text/plain",
		Read: func(_ context.Context, u string) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: u, Text: text}}}, nil
		}}
}

func greetPrompt(name, who string) Prompt {
	return Prompt{Name: name, Description: "greets",
		Arguments: []*mcp.PromptArgument{{Name: "name", Required: true}},
		Get: func(_ context.Context, args map[string]string) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user",
				Content: &mcp.TextContent{Text: fmt.Sprintf("%s greets %s", who, args["name"])}}}}, nil
		}}
}

func connectInMemory(t *testing.T, ctx context.Context, p *Provider, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	go p.Serve(ctx, st)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, opts).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func promptText(t *testing.T, res *mcp.GetPromptResult) string {
	t.Helper()
	if len(res.Messages) != 1 {
		t.Fatalf("messages: %+v", res.Messages)
	}
	tc, ok := res.Messages[0].Content.(*mcp.TextContent)
	if !ok {
		t.Fatalf("content: %T", res.Messages[0].Content)
	}
	return tc.Text
}

func TestProviderResourcesAndPrompts(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	// Without resources or prompts, only tools are advertised.
	bare, err := NewProvider(mcp.Implementation{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	caps := connectInMemory(t, ctx, bare, nil).InitializeResult().Capabilities
	if caps.Tools == nil || !caps.Tools.ListChanged || caps.Resources != nil || caps.Prompts != nil {
		t.Errorf("bare provider capabilities: %+v", caps)
	}

	p, err := NewProvider(mcp.Implementation{}, &ProviderOptions{
		Resources: []Resource{textResource("file:///a.txt", "alpha")},
		Prompts:   []Prompt{greetPrompt("greet", "provider")},
	})
	if err != nil {
		t.Fatal(err)
	}
	resChanged := make(chan struct{}, 10)
	promptChanged := make(chan struct{}, 10)
	cs := connectInMemory(t, ctx, p, &mcp.ClientOptions{
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { resChanged <- struct{}{} },
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { promptChanged <- struct{}{} },
	})
	caps = cs.InitializeResult().Capabilities
	if caps.Tools == nil || !caps.Tools.ListChanged || caps.Resources == nil || !caps.Resources.ListChanged ||
		caps.Prompts == nil || !caps.Prompts.ListChanged {
		t.Errorf("capabilities: tools %+v resources %+v prompts %+v", caps.Tools, caps.Resources, caps.Prompts)
	}

	lr, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(lr.Resources) != 1 || lr.Resources[0].URI != "file:///a.txt" || lr.Resources[0].MIMEType != "text/plain" {
		t.Errorf("resources: %+v", lr.Resources)
	}
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "file:///a.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rr.Contents) != 1 || rr.Contents[0].Text != "alpha" || rr.Contents[0].MIMEType != "text/plain" {
		t.Errorf("read: %+v", rr.Contents)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "file:///none"}); err == nil {
		t.Error("read of an unknown resource succeeded")
	}

	lp, err := cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(lp.Prompts) != 1 || lp.Prompts[0].Name != "greet" || len(lp.Prompts[0].Arguments) != 1 {
		t.Errorf("prompts: %+v", lp.Prompts)
	}
	gp, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet", Arguments: map[string]string{"name": "Ada"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := promptText(t, gp); got != "provider greets Ada" {
		t.Errorf("prompt text %q", got)
	}
	_, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet"})
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("get without a required argument: %v", err)
	}

	// Adding announces; duplicates and bad definitions are refused.
	if err := p.AddResource(textResource("file:///b.txt", "beta")); err != nil {
		t.Fatal(err)
	}
	if err := p.AddPrompt(greetPrompt("greet2", "second")); err != nil {
		t.Fatal(err)
	}
	for name, ch := range map[string]chan struct{}{"resources": resChanged, "prompts": promptChanged} {
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatalf("no %s list_changed notification", name)
		}
	}
	if err := p.AddResource(textResource("file:///b.txt", "again")); !errors.Is(err, ErrDuplicateResource) {
		t.Errorf("duplicate resource: %v", err)
	}
	if err := p.AddPrompt(greetPrompt("greet2", "again")); !errors.Is(err, ErrDuplicatePrompt) {
		t.Errorf("duplicate prompt: %v", err)
	}
	if err := p.AddResource(Resource{URI: "file:///c"}); err == nil {
		t.Error("resource without Read added")
	}
	if err := p.AddPrompt(Prompt{Name: "x"}); err == nil {
		t.Error("prompt without Get added")
	}
	lr, _ = cs.ListResources(ctx, nil)
	lp, _ = cs.ListPrompts(ctx, nil)
	if len(lr.Resources) != 2 || len(lp.Prompts) != 2 {
		t.Errorf("after add: %d resources, %d prompts", len(lr.Resources), len(lp.Prompts))
	}

	if !p.RemoveResource("file:///a.txt") || p.RemoveResource("file:///a.txt") {
		t.Error("RemoveResource")
	}
	if !p.RemovePrompt("greet") || p.RemovePrompt("greet") {
		t.Error("RemovePrompt")
	}
	lr, _ = cs.ListResources(ctx, nil)
	lp, _ = cs.ListPrompts(ctx, nil)
	if len(lr.Resources) != 1 || lr.Resources[0].URI != "file:///b.txt" || len(lp.Prompts) != 1 || lp.Prompts[0].Name != "greet2" {
		t.Errorf("after remove: %+v %+v", lr.Resources, lp.Prompts)
	}
	if got := p.Resources(); len(got) != 1 || got[0].URI != "file:///b.txt" {
		t.Errorf("Resources(): %+v", got)
	}
	if got := p.Prompts(); len(got) != 1 || got[0].Name != "greet2" {
		t.Errorf("Prompts(): %+v", got)
	}
}

// newResourceServer is a go-sdk server over streamable HTTP with one
// resource and one prompt of its own and a resource whose URI every such
// server shares.
func newResourceServer(t *testing.T, name string) *httptest.Server {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: name, Version: "1"}, nil)
	s.AddResource(&mcp.Resource{URI: "test://" + name + "/doc", Name: name + "-doc", MIMEType: "text/plain"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "doc of " + name}}}, nil
		})
	s.AddResource(&mcp.Resource{URI: "test://shared", Name: "shared"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "shared from " + name}}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "greet", Arguments: []*mcp.PromptArgument{{Name: "name", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user",
				Content: &mcp.TextContent{Text: name + " greets " + req.Params.Arguments["name"]}}}}, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(hs.Close)
	return hs
}

func TestGatewayResourcesAndPrompts(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	alpha, beta := newResourceServer(t, "alpha"), newResourceServer(t, "beta")
	fleet := NewFleet([]ServerConfig{{Name: "alpha", URL: alpha.URL}, {Name: "beta", URL: beta.URL}}, nil)
	t.Cleanup(func() { fleet.Close() })
	if err := fleet.Start(ctx); err != nil {
		t.Fatal(err)
	}
	b, err := Mount(ctx, fleet, &BridgeOptions{Separator: Qualifier})
	if err != nil {
		t.Fatal(err)
	}
	gw, err := NewGateway(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	resChanged := make(chan struct{}, 10)
	cs := connectInMemory(t, ctx, gw, &mcp.ClientOptions{
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { resChanged <- struct{}{} },
	})

	lr, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range lr.Resources {
		uris = append(uris, r.URI)
	}
	if want := []string{"test://alpha/doc", "test://beta/doc", "test://shared"}; !slices.Equal(sorted(uris), want) {
		t.Errorf("gateway resources %v, want %v", uris, want)
	}
	for uri, want := range map[string]string{
		"test://alpha/doc": "doc of alpha",
		"test://beta/doc":  "doc of beta",
		"test://shared":    "shared from alpha", // the clash goes to the first server by name
	} {
		rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			t.Errorf("read %s: %v", uri, err)
			continue
		}
		if len(rr.Contents) != 1 || rr.Contents[0].Text != want {
			t.Errorf("read %s: %+v, want %q", uri, rr.Contents, want)
		}
	}

	lp, err := cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range lp.Prompts {
		names = append(names, p.Name)
	}
	if want := []string{"alpha__greet", "beta__greet"}; !slices.Equal(sorted(names), want) {
		t.Errorf("gateway prompts %v, want %v", names, want)
	}
	for name, want := range map[string]string{"alpha__greet": "alpha greets Ada", "beta__greet": "beta greets Ada"} {
		gp, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: name, Arguments: map[string]string{"name": "Ada"}})
		if err != nil {
			t.Errorf("get %s: %v", name, err)
			continue
		}
		if got := promptText(t, gp); got != want {
			t.Errorf("get %s: %q, want %q", name, got, want)
		}
	}
	if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet"}); err == nil {
		t.Error("unqualified prompt name answered")
	}

	// A removed server's resources and prompts go on the next Refresh.
	fleet.Remove("alpha")
	if err := b.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-resChanged:
	case <-ctx.Done():
		t.Fatal("no resources list_changed after the refresh")
	}
	lr, _ = cs.ListResources(ctx, nil)
	uris = nil
	for _, r := range lr.Resources {
		uris = append(uris, r.URI)
	}
	if want := []string{"test://beta/doc", "test://shared"}; !slices.Equal(sorted(uris), want) {
		t.Errorf("after removal: resources %v, want %v", uris, want)
	}
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://shared"})
	if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text != "shared from beta" {
		t.Errorf("shared after removal: %+v %v", rr, err)
	}
	lp, _ = cs.ListPrompts(ctx, nil)
	if len(lp.Prompts) != 1 || lp.Prompts[0].Name != "beta__greet" {
		t.Errorf("after removal: prompts %+v", lp.Prompts)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://alpha/doc"}); err == nil {
		t.Error("a removed server's resource was read")
	}
}

func TestGatewayNoPrefixPrompts(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	alpha, beta := newResourceServer(t, "alpha"), newResourceServer(t, "beta")
	fleet := NewFleet([]ServerConfig{{Name: "alpha", URL: alpha.URL}, {Name: "beta", URL: beta.URL}}, nil)
	t.Cleanup(func() { fleet.Close() })
	if err := fleet.Start(ctx); err != nil {
		t.Fatal(err)
	}
	b, err := Mount(ctx, fleet, &BridgeOptions{NoPrefix: true})
	if err != nil {
		t.Fatal(err)
	}
	gw, err := NewGateway(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs := connectInMemory(t, ctx, gw, nil)
	gp, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet", Arguments: map[string]string{"name": "Bo"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := promptText(t, gp); got != "alpha greets Bo" {
		t.Errorf("plain prompt: %q", got)
	}
	if ps := b.Prompts(); len(ps) != 1 || ps[0].Server != "alpha" || ps[0].Name != "greet" {
		t.Errorf("bridge prompts: %+v", ps)
	}
}

// TestProviderResourceTemplates: a template is listed, reads of matching
// URIs reach its Read (a listed resource of the same URI wins), a bad or
// taken template is refused, and a removed one is gone.
func TestProviderResourceTemplates(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p, err := NewProvider(mcp.Implementation{}, &ProviderOptions{Resources: []Resource{textResource("mem://notes/pinned", "the pinned note")}})
	if err != nil {
		t.Fatal(err)
	}
	read := func(_ context.Context, uri string) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, Text: "note " + strings.TrimPrefix(uri, "mem://notes/")}}}, nil
	}
	if err := p.AddResourceTemplate(ResourceTemplate{URITemplate: "mem://notes/{id}", Title: "Notes", MIMEType: "text/plain", Read: read}); err != nil {
		t.Fatal(err)
	}
	if err := p.AddResourceTemplate(ResourceTemplate{URITemplate: "mem://notes/{id}", Read: read}); !errors.Is(err, ErrDuplicateResource) {
		t.Errorf("duplicate template: %v", err)
	}
	if err := p.AddResourceTemplate(ResourceTemplate{URITemplate: "mem://bad/{", Read: read}); err == nil {
		t.Error("an invalid template was accepted")
	}
	if err := p.AddResourceTemplate(ResourceTemplate{URITemplate: "mem://x/{id}"}); err == nil {
		t.Error("a template without Read was accepted")
	}
	cs := connectInMemory(t, ctx, p, nil)
	tl, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tl.ResourceTemplates) != 1 || tl.ResourceTemplates[0].Name != "mem://notes/{id}" || tl.ResourceTemplates[0].Title != "Notes" {
		t.Fatalf("templates %+v", tl.ResourceTemplates)
	}
	for uri, want := range map[string]string{"mem://notes/7": "note 7", "mem://notes/pinned": "the pinned note"} {
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil || res.Contents[0].Text != want {
			t.Errorf("read %s: %v %+v", uri, err, res)
		}
	}
	if !p.RemoveResourceTemplate("mem://notes/{id}") || p.RemoveResourceTemplate("mem://notes/{id}") {
		t.Error("RemoveResourceTemplate")
	}
	if len(p.ResourceTemplates()) != 0 {
		t.Errorf("left: %+v", p.ResourceTemplates())
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "mem://notes/7"}); err == nil {
		t.Error("read through a removed template")
	}
}
