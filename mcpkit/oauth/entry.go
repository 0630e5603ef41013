package oauth

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/worldforge-go/worldforge/mcpkit/internal/configtext"
)

// Entry is the "oauth" object of a server entry in a configuration
// file. Secrets may come from the environment (clientSecretEnv …, or
// ${VAR} in clientSecret); relative file names are taken relative to the
// configuration file's directory.
type Entry struct {
	Grant                   string         `json:"grant,omitempty"`
	ClientID                string         `json:"clientId,omitempty"`
	ClientSecret            string         `json:"clientSecret,omitempty"`
	ClientSecretEnv         string         `json:"clientSecretEnv,omitempty"`
	TokenEndpointAuthMethod string         `json:"tokenEndpointAuthMethod,omitempty"`
	PrivateKeyFile          string         `json:"privateKeyFile,omitempty"`
	PrivateKeyEnv           string         `json:"privateKeyEnv,omitempty"`
	SigningAlgorithm        string         `json:"signingAlgorithm,omitempty"`
	Issuer                  string         `json:"issuer,omitempty"`
	ClientMetadataURL       string         `json:"clientMetadataUrl,omitempty"`
	ClientName              string         `json:"clientName,omitempty"`
	RedirectURI             string         `json:"redirectUri,omitempty"`
	Scopes                  []string       `json:"scopes,omitempty"`
	DPoP                    bool           `json:"dpop,omitempty"`
	AssertionFile           string         `json:"assertionFile,omitempty"`
	AssertionEnv            string         `json:"assertionEnv,omitempty"`
	IdentityProvider        *IdentityEntry `json:"idp,omitempty"`
}

// IdentityEntry is the "idp" object of an Entry.
type IdentityEntry struct {
	TokenEndpoint   string `json:"tokenEndpoint,omitempty"`
	ClientID        string `json:"clientId,omitempty"`
	ClientSecret    string `json:"clientSecret,omitempty"`
	ClientSecretEnv string `json:"clientSecretEnv,omitempty"`
	IDTokenFile     string `json:"idTokenFile,omitempty"`
	IDTokenEnv      string `json:"idTokenEnv,omitempty"`
}

// jsonKeys returns the JSON names of a struct's fields.
func jsonKeys(v any) map[string]bool {
	keys := map[string]bool{}
	t := reflect.TypeOf(v)
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		keys[name] = true
	}
	return keys
}

// checkKeys rejects members of a JSON object that dst does not have.
func checkKeys(data json.RawMessage, prefix string, dst any) *ConfigError {
	var m map[string]json.RawMessage
	if configtext.FirstByte(data) != '{' || json.Unmarshal(data, &m) != nil {
		return &ConfigError{Field: strings.TrimSuffix(prefix, "."), Message: "want an object"}
	}
	known := jsonKeys(dst)
	var unknown []string
	for k := range m {
		if !known[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return &ConfigError{Field: prefix + unknown[0], Message: "unknown field"}
	}
	return nil
}

// ParseEntry turns the "oauth" object of a server entry in the
// configuration file named file into a Config. getenv looks up the
// variables of *Env fields and ${VAR} references (a variable set to the
// empty string counts as unset); relative file names are taken relative
// to file's directory. The error is a *ConfigError naming the field; it
// never shows a secret.
func ParseEntry(data json.RawMessage, file string, getenv func(string) string) (*Config, error) {
	o, e := parseEntry(data, file, getenv)
	if e != nil {
		return nil, e
	}
	return o, nil
}

func parseEntry(data json.RawMessage, file string, getenv func(string) string) (*Config, *ConfigError) {
	if e := checkKeys(data, "oauth.", Entry{}); e != nil {
		return nil, e
	}
	var raw struct {
		Entry
		IDP json.RawMessage `json:"idp"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		field := "oauth"
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			field += "." + strings.TrimPrefix(te.Field, "Entry.")
		}
		return nil, &ConfigError{Field: field, Message: "wrong type"}
	}
	ent := raw.Entry
	if len(raw.IDP) > 0 && !configtext.IsNull(raw.IDP) {
		if e := checkKeys(raw.IDP, "oauth.idp.", IdentityEntry{}); e != nil {
			return nil, e
		}
		ent.IdentityProvider = &IdentityEntry{}
		if err := json.Unmarshal(raw.IDP, ent.IdentityProvider); err != nil {
			return nil, &ConfigError{Field: "oauth.idp", Message: "want an object of strings"}
		}
	} else {
		ent.IdentityProvider = nil
	}

	var bad *ConfigError
	expand := func(field, s string, secret bool) string {
		if bad != nil || s == "" {
			return s
		}
		out, err := configtext.ExpandVars(s, configtext.Lookup(getenv))
		if err != nil {
			msg := err.Error()
			if secret {
				msg = "bad or unset ${VAR} reference (value not shown)"
			}
			bad = &ConfigError{Field: "oauth." + field, Message: msg}
		}
		return out
	}
	fromEnv := func(field, name string) string {
		if bad != nil || name == "" {
			return ""
		}
		if !configtext.ValidVarName(name) {
			bad = &ConfigError{Field: "oauth." + field, Message: fmt.Sprintf("bad variable name %q", name)}
			return ""
		}
		v := getenv(name)
		if v == "" {
			bad = &ConfigError{Field: "oauth." + field, Message: fmt.Sprintf("variable %s is not set", name)}
		}
		return v
	}
	path := func(field, p string) string {
		p = expand(field, p, false)
		if p != "" && !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(file), p)
		}
		return p
	}
	both := func(a, b string) bool { return a != "" && b != "" }

	o := &Config{
		Grant:                   Grant(ent.Grant),
		ClientID:                expand("clientId", ent.ClientID, false),
		TokenEndpointAuthMethod: ent.TokenEndpointAuthMethod,
		SigningAlgorithm:        ent.SigningAlgorithm,
		Issuer:                  expand("issuer", ent.Issuer, false),
		ClientMetadataURL:       expand("clientMetadataUrl", ent.ClientMetadataURL, false),
		ClientName:              ent.ClientName,
		RedirectURI:             expand("redirectUri", ent.RedirectURI, false),
		DPoP:                    ent.DPoP,
	}
	for i, s := range ent.Scopes {
		o.Scopes = append(o.Scopes, expand(fmt.Sprintf("scopes[%d]", i), s, false))
	}
	if both(ent.ClientSecret, ent.ClientSecretEnv) {
		return nil, errf("clientSecretEnv", "set both clientSecret and clientSecretEnv")
	}
	o.ClientSecret = expand("clientSecret", ent.ClientSecret, true) + fromEnv("clientSecretEnv", ent.ClientSecretEnv)
	if both(ent.PrivateKeyFile, ent.PrivateKeyEnv) {
		return nil, errf("privateKeyEnv", "set both privateKeyFile and privateKeyEnv")
	}
	o.PrivateKey = fromEnv("privateKeyEnv", ent.PrivateKeyEnv)
	if keyFile := path("privateKeyFile", ent.PrivateKeyFile); keyFile != "" && bad == nil {
		data, err := os.ReadFile(keyFile)
		if err != nil {
			return nil, errf("privateKeyFile", "cannot read %s", keyFile)
		}
		o.PrivateKey = string(data)
	}
	if both(ent.AssertionFile, ent.AssertionEnv) {
		return nil, errf("assertionEnv", "set both assertionFile and assertionEnv")
	}
	o.AssertionFile = path("assertionFile", ent.AssertionFile)
	o.Assertion = fromEnv("assertionEnv", ent.AssertionEnv)
	if p := ent.IdentityProvider; p != nil {
		if both(p.ClientSecret, p.ClientSecretEnv) {
			return nil, errf("idp.clientSecretEnv", "set both clientSecret and clientSecretEnv")
		}
		if both(p.IDTokenFile, p.IDTokenEnv) {
			return nil, errf("idp.idTokenEnv", "set both idTokenFile and idTokenEnv")
		}
		o.IdentityProvider = &IdentityProvider{
			TokenEndpoint: expand("idp.tokenEndpoint", p.TokenEndpoint, false),
			ClientID:      expand("idp.clientId", p.ClientID, false),
			ClientSecret:  expand("idp.clientSecret", p.ClientSecret, true) + fromEnv("idp.clientSecretEnv", p.ClientSecretEnv),
			IDToken:       fromEnv("idp.idTokenEnv", p.IDTokenEnv),
			IDTokenFile:   path("idp.idTokenFile", p.IDTokenFile),
		}
	}
	if bad != nil {
		return nil, bad
	}
	if _, _, e := o.validate(); e != nil {
		if e.Field == "oauth.privateKeyFile" && ent.PrivateKeyEnv != "" {
			e.Field = "oauth.privateKeyEnv" // name the key the file used
		}
		return nil, e
	}
	return o, nil
}
