package authserver_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/worldforge-go/worldforge/internal/dbtest"
	"github.com/worldforge-go/worldforge/internal/testserver"
)

// TestNativeAppRedirect runs a native app's flow (RFC 8252 §7.1: a
// private-use scheme redirect): the consent page names the scheme the
// code goes to, and approving sends the browser to the app with the code.
func TestNativeAppRedirect(t *testing.T) {
	s := testserver.StartWith(t, dbtest.Open(t), testserver.Config{Console: true, OAuth: true})
	b := s.Browser(t, s.Owner)
	const redirect = "com.example.app:/oauth2redirect"
	clientID := s.RegisterClient(t, `{"client_name":"Native App","redirect_uris":["`+redirect+`"]}`)
	q := url.Values{"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {redirect}, "state": {"st"},
		"code_challenge": {"E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"}, "code_challenge_method": {"S256"}, "resource": {s.MCPURL()}}
	back, err := b.Approve(context.Background(), s.URL+"/authorize?"+q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if back.Scheme != "com.example.app" || back.Path != "/oauth2redirect" || back.Query().Get("code") == "" || back.Query().Get("state") != "st" {
		t.Errorf("redirect back %s", back)
	}
	if page := b.ConsentPages()[0]; !strings.Contains(page, "sends it back to <strong>com.example.app:</strong>") {
		t.Errorf("the consent page does not name the app's scheme:\n%s", page)
	}
}
