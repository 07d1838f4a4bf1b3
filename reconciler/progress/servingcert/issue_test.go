package servingcert

import (
	"crypto/x509"
	"encoding/pem"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var names = []string{"svc", "svc.ns", "svc.ns.svc", "svc.ns.svc.cluster.local"}

// TestIssuedCertificateVerifies: a client that trusts only the CA accepts
// the serving certificate for each of the Service's names.
func TestIssuedCertificateVerifies(t *testing.T) {
	now := time.Now()
	m, err := New(names, now)
	require.NoError(t, err)
	roots := x509.NewCertPool()
	require.True(t, roots.AppendCertsFromPEM(m.CACert))
	block, _ := pem.Decode(m.Cert)
	cert, err := x509.ParseCertificate(block.Bytes)
	require.NoError(t, err)
	for _, name := range names {
		_, err := cert.Verify(x509.VerifyOptions{DNSName: name, Roots: roots, CurrentTime: now})
		assert.NoError(t, err, name)
	}
	_, err = cert.Verify(x509.VerifyOptions{DNSName: "other.ns.svc", Roots: roots, CurrentTime: now})
	assert.Error(t, err)
	what, why := Needs(m, names, now)
	assert.Empty(t, what, why)
}

func TestNeedsRenewal(t *testing.T) {
	now := time.Now()
	m, err := New(names, now)
	require.NoError(t, err)
	what, _ := Needs(m, names, now.Add(ServingValidity-RenewServingBefore+time.Hour))
	assert.Equal(t, "serving", what, "the serving certificate near its end")
	what, _ = Needs(m, names[:2], now)
	assert.Equal(t, "serving", what, "other names")
	what, _ = Needs(m, names, now.Add(CAValidity-RenewCABefore+time.Hour))
	assert.Equal(t, "ca", what, "the CA near its end")
	what, _ = Needs(Material{}, names, now)
	assert.Equal(t, "ca", what, "nothing")

	other, err := New(names, now)
	require.NoError(t, err)
	mixed := m
	mixed.Cert, mixed.Key = other.Cert, other.Key
	what, _ = Needs(mixed, names, now)
	assert.Equal(t, "serving", what, "a certificate of another CA")

	renewed, err := Issue(m, names, now)
	require.NoError(t, err)
	assert.Equal(t, string(m.CACert), string(renewed.CACert), "renewing the certificate keeps the CA")
	assert.NotEqual(t, string(m.Cert), string(renewed.Cert))
	what, why := Needs(renewed, names, now)
	assert.Empty(t, what, why)
}
