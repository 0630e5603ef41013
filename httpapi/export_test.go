package httpapi

// RouteScopes returns the route → scope table, for the tests of package
// httpapi_test (the access matrix, the Host check of every route).
func (s *Server) RouteScopes() map[string][]string {
	out := map[string][]string{}
	for _, rt := range s.routes() {
		out[rt.pattern] = rt.access.Scopes
	}
	return out
}
