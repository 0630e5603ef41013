package oauth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
)

// parsePrivateKey reads a PEM private key for private_key_jwt: PKCS #8,
// SEC 1 EC or PKCS #1 RSA.
func parsePrivateKey(pemText string) (crypto.Signer, error) {
	block, _ := pem.Decode([]byte(pemText))
	if block == nil {
		return nil, errors.New("not a PEM private key")
	}
	var (
		k   any
		err error
	)
	switch block.Type {
	case "PRIVATE KEY":
		k, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	case "EC PRIVATE KEY":
		k, err = x509.ParseECPrivateKey(block.Bytes)
	case "RSA PRIVATE KEY":
		k, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	default:
		return nil, fmt.Errorf("PEM block %q is not a private key", block.Type)
	}
	if err != nil {
		return nil, errors.New("cannot parse the private key")
	}
	switch k := k.(type) {
	case *ecdsa.PrivateKey:
		return k, nil
	case *rsa.PrivateKey:
		return k, nil
	case ed25519.PrivateKey:
		return k, nil
	}
	return nil, fmt.Errorf("unsupported private key type %T", k)
}

func defaultSigningAlg(k crypto.Signer) string {
	switch k := k.(type) {
	case *ecdsa.PrivateKey:
		switch k.Curve {
		case elliptic.P384():
			return "ES384"
		case elliptic.P521():
			return "ES512"
		}
		return "ES256"
	case ed25519.PrivateKey:
		return "EdDSA"
	}
	return "RS256"
}

func checkSigningAlg(alg string, k crypto.Signer) error {
	ok := false
	switch k := k.(type) {
	case *ecdsa.PrivateKey:
		ok = alg == "ES256" && k.Curve == elliptic.P256() || alg == "ES384" && k.Curve == elliptic.P384() ||
			alg == "ES512" && k.Curve == elliptic.P521()
	case *rsa.PrivateKey:
		ok = slices.Contains([]string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512"}, alg)
	case ed25519.PrivateKey:
		ok = alg == "EdDSA"
	}
	if !ok {
		return fmt.Errorf("algorithm %q does not fit the private key (%s)", alg, defaultSigningAlg(k)+" family")
	}
	return nil
}
