// Package servingcert keeps the progress server's TLS material: a CA of its
// own and a serving certificate that CA signs for the Service's DNS names,
// both in one Secret of the reconciler's namespace, so that every replica
// serves the same certificate and the jobs' pods trust it through the CA
// alone. Nothing but the reconciler issues or reads it: the CA signs
// nothing else, and pods are given its certificate, never its key.
package servingcert

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"time"
)

// How long what Issue makes is valid, and how long before its end it is
// made again. The CA's certificate is copied into every progress job's
// ConfigMap, which a running pod's kubelet refreshes only at its periodic
// sync: the CA is long-lived and changes rarely; the serving certificate,
// which only the reconciler holds, changes under the same CA.
const (
	CAValidity      = 10 * 365 * 24 * time.Hour
	ServingValidity = 365 * 24 * time.Hour
	// RenewCABefore is how long before its end a CA is replaced, and with
	// it the serving certificate.
	RenewCABefore = 365 * 24 * time.Hour
	// RenewServingBefore is how long before its end the serving
	// certificate is replaced, under the same CA.
	RenewServingBefore = 30 * 24 * time.Hour
	// backdate covers clocks of the cluster's nodes a little behind the
	// reconciler's.
	backdate = time.Hour
)

// Material is a CA and the serving certificate it signed, PEM-encoded as a
// kubernetes.io/tls Secret holds them.
type Material struct {
	CACert, CAKey, Cert, Key []byte
}

// Equal tells whether two Materials are the same bytes.
func (m Material) Equal(o Material) bool {
	return string(m.CACert) == string(o.CACert) && string(m.CAKey) == string(o.CAKey) &&
		string(m.Cert) == string(o.Cert) && string(m.Key) == string(o.Key)
}

// NewCA makes a CA of its own, valid from now.
func NewCA(now time.Time) (Material, error) {
	key, serial, err := newKey()
	if err != nil {
		return Material{}, err
	}
	template := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: fmt.Sprintf("trainfn-progress-ca@%d", now.Unix())},
		NotBefore:             now.Add(-backdate),
		NotAfter:              now.Add(CAValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		// It signs serving certificates, never another CA.
		MaxPathLenZero: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, key.Public(), key)
	if err != nil {
		return Material{}, err
	}
	keyPEM, err := encodeKey(key)
	if err != nil {
		return Material{}, err
	}
	return Material{CACert: encodeCert(der), CAKey: keyPEM}, nil
}

// Issue is m with a new serving certificate, signed by m's CA, for
// dnsNames, valid from now.
func Issue(m Material, dnsNames []string, now time.Time) (Material, error) {
	if len(dnsNames) == 0 {
		return Material{}, errors.New("servingcert: no DNS name to issue a serving certificate for")
	}
	ca, caKey, err := parseCA(m)
	if err != nil {
		return Material{}, err
	}
	key, serial, err := newKey()
	if err != nil {
		return Material{}, err
	}
	notAfter := now.Add(ServingValidity)
	if notAfter.After(ca.NotAfter) {
		notAfter = ca.NotAfter
	}
	template := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: dnsNames[0]},
		DNSNames:     slices.Clone(dnsNames),
		NotBefore:    now.Add(-backdate),
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, template, ca, key.Public(), caKey)
	if err != nil {
		return Material{}, err
	}
	keyPEM, err := encodeKey(key)
	if err != nil {
		return Material{}, err
	}
	m.Cert, m.Key = encodeCert(der), keyPEM
	return m, nil
}

// New is a new CA and a serving certificate for dnsNames.
func New(dnsNames []string, now time.Time) (Material, error) {
	ca, err := NewCA(now)
	if err != nil {
		return Material{}, err
	}
	return Issue(ca, dnsNames, now)
}

// Needs says what m lacks to serve dnsNames from now until a while ahead:
// nothing (""), a new serving certificate ("serving"), or a new CA and
// certificate ("ca"), with the reason.
func Needs(m Material, dnsNames []string, now time.Time) (what, why string) {
	ca, _, err := parseCA(m)
	switch {
	case err != nil:
		return "ca", err.Error()
	case now.Add(RenewCABefore).After(ca.NotAfter):
		return "ca", "the CA ends at " + ca.NotAfter.UTC().Format(time.RFC3339)
	}
	cert, err := parseServing(m, ca)
	switch {
	case err != nil:
		return "serving", err.Error()
	case now.Add(RenewServingBefore).After(cert.NotAfter):
		return "serving", "the serving certificate ends at " + cert.NotAfter.UTC().Format(time.RFC3339)
	case !slices.Equal(cert.DNSNames, dnsNames):
		return "serving", fmt.Sprintf("the serving certificate is for %v, not %v", cert.DNSNames, dnsNames)
	}
	return "", ""
}

func parseCA(m Material) (*x509.Certificate, crypto.Signer, error) {
	ca, err := parseCert(m.CACert, "the CA's certificate")
	if err != nil {
		return nil, nil, err
	}
	if !ca.IsCA {
		return nil, nil, errors.New("the CA's certificate is no CA")
	}
	key, err := parseKey(m.CAKey, "the CA's key")
	if err != nil {
		return nil, nil, err
	}
	if !publicKeysEqual(ca.PublicKey, key.Public()) {
		return nil, nil, errors.New("the CA's key is not its certificate's")
	}
	return ca, key, nil
}

// parseServing is m's serving certificate, if ca signed it and m's key is
// its.
func parseServing(m Material, ca *x509.Certificate) (*x509.Certificate, error) {
	cert, err := parseCert(m.Cert, "the serving certificate")
	if err != nil {
		return nil, err
	}
	if err := cert.CheckSignatureFrom(ca); err != nil {
		return nil, fmt.Errorf("the serving certificate is not the CA's: %w", err)
	}
	key, err := parseKey(m.Key, "the serving key")
	if err != nil {
		return nil, err
	}
	if !publicKeysEqual(cert.PublicKey, key.Public()) {
		return nil, errors.New("the serving key is not its certificate's")
	}
	return cert, nil
}

func parseCert(data []byte, what string) (*x509.Certificate, error) {
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, fmt.Errorf("%s: no PEM certificate", what)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return cert, nil
}

func parseKey(data []byte, what string) (crypto.Signer, error) {
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "PRIVATE KEY" {
		return nil, fmt.Errorf("%s: no PEM private key", what)
	}
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("%s: cannot sign", what)
	}
	return signer, nil
}

func publicKeysEqual(a, b crypto.PublicKey) bool {
	k, ok := a.(interface{ Equal(crypto.PublicKey) bool })
	return ok && k.Equal(b)
}

func encodeCert(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func encodeKey(key *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// newKey is a certificate's new P-256 key and its random serial.
func newKey() (*ecdsa.PrivateKey, *big.Int, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := serialNumber()
	return key, serial, err
}

// serialNumber is a random serial, as RFC 5280 asks: positive, at most 20
// bytes.
func serialNumber() (*big.Int, error) {
	return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
}
