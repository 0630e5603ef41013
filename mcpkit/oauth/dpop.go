package oauth

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// dpopProof signs a proof for a request; accessToken binds it to a token.
func (st *Flow) dpopProof(method string, u *url.URL, accessToken string) (string, error) {
	st.mu.Lock()
	if st.dpopKey == nil {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			st.mu.Unlock()
			return "", err
		}
		st.dpopKey = k
	}
	key := st.dpopKey
	nonce := st.nonces[u.Scheme+"://"+u.Host]
	st.mu.Unlock()
	pub, err := key.PublicKey.Bytes() // 0x04 || X || Y
	if err != nil {
		return "", err
	}
	htu := *u
	htu.RawQuery, htu.Fragment, htu.RawFragment = "", "", ""
	claims := jwt.MapClaims{"jti": rand.Text(), "htm": method, "htu": htu.String(), "iat": time.Now().Unix()}
	if nonce != "" {
		claims["nonce"] = nonce
	}
	if accessToken != "" {
		sum := sha256.Sum256([]byte(accessToken))
		claims["ath"] = base64.RawURLEncoding.EncodeToString(sum[:])
	}
	t := jwt.NewWithClaims(jwt.SigningMethodES256, claims)
	t.Header["typ"] = "dpop+jwt"
	t.Header["jwk"] = map[string]string{
		"kty": "EC", "crv": "P-256",
		"x": base64.RawURLEncoding.EncodeToString(pub[1:33]),
		"y": base64.RawURLEncoding.EncodeToString(pub[33:65]),
	}
	return t.SignedString(key)
}

// noteNonce remembers a DPoP-Nonce the server sent.
func (st *Flow) noteNonce(u *url.URL, resp *http.Response) {
	if n := resp.Header.Get("DPoP-Nonce"); n != "" {
		st.mu.Lock()
		st.nonces[u.Scheme+"://"+u.Host] = n
		st.mu.Unlock()
	}
}

// tokenTransport carries x/oauth2's token requests: it adds the resource
// indicator to refreshes (x/oauth2 sends none) and, for DPoP, a proof,
// retrying once with the server's nonce on use_dpop_nonce.
type tokenTransport struct {
	st       *Flow
	base     http.RoundTripper
	dpop     bool
	resource string
}

func (t *tokenTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		var err error
		body, err = io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
	}
	if form, err := url.ParseQuery(string(body)); err == nil && form.Get("grant_type") == "refresh_token" && !form.Has("resource") && t.resource != "" {
		form.Set("resource", t.resource)
		body = []byte(form.Encode())
	}
	for attempt := 0; ; attempt++ {
		out := req.Clone(req.Context())
		out.Body, out.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		if t.dpop {
			proof, err := t.st.dpopProof(req.Method, req.URL, "")
			if err != nil {
				return nil, err
			}
			out.Header.Set("DPoP", proof)
		}
		resp, err := t.base.RoundTrip(out)
		if err != nil || !t.dpop {
			return resp, err
		}
		t.st.noteNonce(req.URL, resp)
		if attempt > 0 || resp.StatusCode != http.StatusBadRequest || resp.Header.Get("DPoP-Nonce") == "" {
			return resp, nil
		}
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(data, &e) != nil || e.Error != "use_dpop_nonce" {
			resp.Body = io.NopCloser(bytes.NewReader(data))
			return resp, nil
		}
	}
}
