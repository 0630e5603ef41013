package console

import (
	"net/http"
	"strings"

	wf "github.com/worldforge-go/worldforge"
	"github.com/worldforge-go/worldforge/engine"
)

// The home page: the worlds the signed-in user owns or runs as GM, and
// a form to create one.

func init() { routeSets = append(routeSets, worldsRoutes) }

func worldsRoutes(c *Console) []route {
	return []route{
		{pattern: "GET /{$}", h: c.worlds},
		{pattern: "POST /w", h: c.createWorld},
	}
}

type worldsData struct {
	Worlds    []wf.WorldListing
	Templates []engine.TemplateInfo
	Sizes     []string
}

func (c *Console) worlds(w http.ResponseWriter, r *http.Request, v *visit) {
	list, err := c.app.ListReviewWorlds(r.Context(), v.req())
	if err != nil {
		c.fail(w, r, v, err)
		return
	}
	c.render(w, r, v, http.StatusOK, "worlds", "Your worlds", &worldsData{Worlds: list, Templates: engine.Templates(), Sizes: []string{"small", "medium", "large"}})
}

func (c *Console) createWorld(w http.ResponseWriter, r *http.Request, v *visit) {
	in := &wf.CreateWorldArgs{
		Name:     strings.TrimSpace(r.PostFormValue("name")),
		Template: r.PostFormValue("template"),
		Size:     r.PostFormValue("size"),
	}
	if s := strings.TrimSpace(r.PostFormValue("seed")); s != "" {
		seed, err := wf.ParseSeed(s)
		if err != nil {
			c.redirectErr(w, r, "/", err)
			return
		}
		in.Seed = &seed
	}
	res, err := c.app.CreateWorld(r.Context(), v.req(), in)
	if err != nil {
		c.redirectErr(w, r, "/", err)
		return
	}
	c.redirect(w, r, "/w/"+res.ID, "World created.")
}
