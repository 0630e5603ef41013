package oauth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"testing"
)

func TestParsePrivateKeyTypes(t *testing.T) {
	ec384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	sec1, _ := x509.MarshalECPrivateKey(ec384)
	k, err := parsePrivateKey(string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: sec1})))
	if err != nil || defaultSigningAlg(k) != "ES384" {
		t.Fatalf("SEC 1 P-384 key: %v, %v", k, err)
	}
	if checkSigningAlg("ES256", k) == nil || checkSigningAlg("RS256", k) == nil {
		t.Error("a P-384 key accepted ES256 or RS256")
	}
	if _, err := parsePrivateKey("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"); err == nil {
		t.Error("a certificate parsed as a private key")
	}
}
