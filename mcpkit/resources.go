package mcpkit

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Resource is a resource a Provider serves: resources/list shows it and
// resources/read of URI calls Read.
type Resource struct {
	// URI identifies the resource; it must parse as a URL.
	URI string
	// Name is the resource's name (default URI).
	Name        string
	Description string
	MIMEType    string
	// Read returns the resource's contents. Contents without a URI or
	// MIME type get the resource's. An error is answered to the client as
	// a JSON-RPC error (a *jsonrpc.Error as it is, for example
	// mcp.ResourceNotFoundError).
	Read func(ctx context.Context, uri string) (*mcp.ReadResourceResult, error)
}

// ResourceTemplate is a family of resources a Provider serves:
// resources/templates/list shows it, and resources/read of a URI that
// matches URITemplate (RFC 6570), and is no resource of its own, calls
// Read.
type ResourceTemplate struct {
	// URITemplate is the RFC 6570 template; it must be absolute.
	URITemplate string
	// Name is the template's name (default URITemplate).
	Name        string
	Title       string
	Description string
	MIMEType    string
	// Read returns the contents of a matching URI; errors as for
	// Resource.Read.
	Read func(ctx context.Context, uri string) (*mcp.ReadResourceResult, error)
}

// AddResourceTemplate adds a resource template, announcing it to
// connected clients with notifications/resources/list_changed. It fails
// if the template is empty, invalid or taken, or if Read is nil.
func (p *Provider) AddResourceTemplate(t ResourceTemplate) (err error) {
	if t.URITemplate == "" {
		return fmt.Errorf("mcpkit: resource template without URI template")
	}
	if t.Read == nil {
		return fmt.Errorf("mcpkit: resource template %q has no Read", t.URITemplate)
	}
	if t.Name == "" {
		t.Name = t.URITemplate
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.templates == nil {
		p.templates = map[string]ResourceTemplate{}
	}
	if _, ok := p.templates[t.URITemplate]; ok {
		return fmt.Errorf("mcpkit: resource template %q: %w", t.URITemplate, ErrDuplicateResource)
	}
	defer func() {
		// The go-sdk panics on a template it cannot parse.
		if v := recover(); v != nil {
			err = fmt.Errorf("mcpkit: resource template %q: %v", t.URITemplate, v)
		}
	}()
	read := t.Read
	p.server.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: t.URITemplate, Name: t.Name, Title: t.Title, Description: t.Description, MIMEType: t.MIMEType},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return read(withIncoming(ctx, req), req.Params.URI)
		})
	p.templates[t.URITemplate] = t
	return nil
}

// RemoveResourceTemplate removes the resource template, announcing it to
// connected clients, and reports whether there was one.
func (p *Provider) RemoveResourceTemplate(uriTemplate string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.templates[uriTemplate]; !ok {
		return false
	}
	delete(p.templates, uriTemplate)
	p.server.RemoveResourceTemplates(uriTemplate)
	return true
}

// ResourceTemplates returns the provider's resource templates, sorted by
// URI template.
func (p *Provider) ResourceTemplates() []ResourceTemplate {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.SortedFunc(maps.Values(p.templates), func(x, y ResourceTemplate) int { return strings.Compare(x.URITemplate, y.URITemplate) })
}

// Prompt is a prompt a Provider serves: prompts/list shows it and
// prompts/get of Name calls Get.
type Prompt struct {
	Name        string
	Description string
	// Arguments are the prompt's arguments; a prompts/get that lacks a
	// required one is answered with -32602 (invalid params) without
	// calling Get.
	Arguments []*mcp.PromptArgument
	// Get renders the prompt. An error is answered to the client as a
	// JSON-RPC error (a *jsonrpc.Error as it is).
	Get func(ctx context.Context, args map[string]string) (*mcp.GetPromptResult, error)
}

// AddResource adds a resource, announcing it to connected clients with
// notifications/resources/list_changed. The provider advertises the
// resources capability to clients that connect while it has any. It fails
// if the URI is empty, does not parse or is taken, or if Read is nil.
func (p *Provider) AddResource(r Resource) error {
	if r.URI == "" {
		return fmt.Errorf("mcpkit: resource without URI")
	}
	if _, err := url.Parse(r.URI); err != nil {
		return fmt.Errorf("mcpkit: resource URI: %w", err)
	}
	if r.Read == nil {
		return fmt.Errorf("mcpkit: resource %q has no Read", r.URI)
	}
	if r.Name == "" {
		r.Name = r.URI
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.resources == nil {
		p.resources = map[string]Resource{}
	}
	if _, ok := p.resources[r.URI]; ok {
		return fmt.Errorf("mcpkit: resource %q: %w", r.URI, ErrDuplicateResource)
	}
	p.resources[r.URI] = r
	read := r.Read
	p.server.AddResource(&mcp.Resource{URI: r.URI, Name: r.Name, Description: r.Description, MIMEType: r.MIMEType},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return read(withIncoming(ctx, req), req.Params.URI)
		})
	return nil
}

// RemoveResource removes the resource with this URI, announcing it to
// connected clients, and reports whether there was one.
func (p *Provider) RemoveResource(uri string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.resources[uri]; !ok {
		return false
	}
	delete(p.resources, uri)
	p.server.RemoveResources(uri)
	return true
}

// Resources returns the provider's resources, sorted by URI.
func (p *Provider) Resources() []Resource {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.SortedFunc(maps.Values(p.resources), func(x, y Resource) int { return strings.Compare(x.URI, y.URI) })
}

// AddPrompt adds a prompt, announcing it to connected clients with
// notifications/prompts/list_changed. The provider advertises the prompts
// capability to clients that connect while it has any. It fails if the
// name is empty or taken, or if Get is nil.
func (p *Provider) AddPrompt(pr Prompt) error {
	if pr.Name == "" {
		return fmt.Errorf("mcpkit: prompt without name")
	}
	if pr.Get == nil {
		return fmt.Errorf("mcpkit: prompt %q has no Get", pr.Name)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.prompts == nil {
		p.prompts = map[string]Prompt{}
	}
	if _, ok := p.prompts[pr.Name]; ok {
		return fmt.Errorf("mcpkit: prompt %q: %w", pr.Name, ErrDuplicatePrompt)
	}
	p.prompts[pr.Name] = pr
	get, args := pr.Get, pr.Arguments
	p.server.AddPrompt(&mcp.Prompt{Name: pr.Name, Description: pr.Description, Arguments: args},
		func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			var missing []string
			for _, a := range args {
				if a != nil && a.Required {
					if _, ok := req.Params.Arguments[a.Name]; !ok {
						missing = append(missing, a.Name)
					}
				}
			}
			if len(missing) > 0 {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
					Message: fmt.Sprintf("prompt %q: missing required arguments: %s", req.Params.Name, strings.Join(missing, ", "))}
			}
			return get(withIncoming(ctx, req), req.Params.Arguments)
		})
	return nil
}

// RemovePrompt removes the prompt with this name, announcing it to
// connected clients, and reports whether there was one.
func (p *Provider) RemovePrompt(name string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.prompts[name]; !ok {
		return false
	}
	delete(p.prompts, name)
	p.server.RemovePrompts(name)
	return true
}

// Prompts returns the provider's prompts, sorted by name.
func (p *Provider) Prompts() []Prompt {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.SortedFunc(maps.Values(p.prompts), func(x, y Prompt) int { return strings.Compare(x.Name, y.Name) })
}

// Errors of AddResource and AddPrompt for a URI or name already in use.
var (
	ErrDuplicateResource = fmt.Errorf("a resource with this URI exists")
	ErrDuplicatePrompt   = fmt.Errorf("a prompt with this name exists")
)
