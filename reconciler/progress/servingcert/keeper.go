package servingcert

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainfn/trainfn/render/handoff"
)

// The Secret's keys: kubernetes.io/tls's two, and the CA's.
const (
	CACertKey = "ca.crt"
	CAKeyKey  = "ca.key"
)

// Keeper keeps the Secret that holds the TLS material and serves its
// certificate. Replicas share the Secret: the first to find it missing
// creates it, one that loses that race (or a race to renew it) reads the
// winner's, so that every replica serves the same certificate under the
// same CA.
type Keeper struct {
	// Live reads the Secret by name, from the API server: the reconciler
	// caches no Secret. Writer creates and updates it.
	Live   client.Reader
	Writer client.Writer
	// Secret is the Secret's namespace and name.
	Secret types.NamespacedName
	// DNSNames are the names the serving certificate is for: the
	// Service's.
	DNSNames []string
	Now      func() time.Time
	Log      logr.Logger

	mu      sync.Mutex
	current Material
	cert    *tls.Certificate
	// changed is closed when the CA changes, and replaced.
	changed chan struct{}
}

// Ensure reads the Secret, creates or renews it when it must, and serves
// what it then holds.
func (k *Keeper) Ensure(ctx context.Context) error {
	for attempt := 0; attempt < 3; attempt++ {
		var s corev1.Secret
		err := k.Live.Get(ctx, k.Secret, &s)
		switch {
		case apierrors.IsNotFound(err):
			err = k.create(ctx)
		case err == nil:
			err = k.renewIfDue(ctx, &s)
		}
		// Another replica wrote first: read what it wrote.
		if apierrors.IsAlreadyExists(err) || apierrors.IsConflict(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("progress TLS Secret %s: %w", k.Secret, err)
		}
		return nil
	}
	return fmt.Errorf("progress TLS Secret %s: written by another replica at each of 3 attempts", k.Secret)
}

func (k *Keeper) create(ctx context.Context) error {
	m, err := New(k.DNSNames, k.Now())
	if err != nil {
		return err
	}
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: k.Secret.Namespace, Name: k.Secret.Name},
		Type:       corev1.SecretTypeTLS,
		Data:       dataOf(m),
	}
	if err := k.Writer.Create(ctx, s, client.FieldOwner(handoff.FieldManager)); err != nil {
		return err
	}
	k.Log.Info("progress TLS Secret created", "secret", k.Secret.String(), "dnsNames", k.DNSNames)
	return k.use(m)
}

// renewIfDue serves what s holds, renewed first when due; s is updated on
// the version read, so that of two replicas renewing at once one wins.
func (k *Keeper) renewIfDue(ctx context.Context, s *corev1.Secret) error {
	m := materialOf(s)
	what, why := Needs(m, k.DNSNames, k.Now())
	if what == "" {
		return k.use(m)
	}
	var err error
	switch what {
	case "ca":
		m, err = New(k.DNSNames, k.Now())
	default:
		m, err = Issue(m, k.DNSNames, k.Now())
	}
	if err != nil {
		return err
	}
	s.Type, s.Data = corev1.SecretTypeTLS, dataOf(m)
	if err := k.Writer.Update(ctx, s, client.FieldOwner(handoff.FieldManager)); err != nil {
		return err
	}
	k.Log.Info("progress TLS Secret renewed", "secret", k.Secret.String(), "renewed", what, "because", why)
	return k.use(m)
}

// use serves m from now on.
func (k *Keeper) use(m Material) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.cert != nil && m.Equal(k.current) {
		return nil
	}
	cert, err := tls.X509KeyPair(m.Cert, m.Key)
	if err != nil {
		return err
	}
	caChanged := string(m.CACert) != string(k.current.CACert)
	k.current, k.cert = m, &cert
	if caChanged {
		if k.changed != nil {
			close(k.changed)
		}
		k.changed = make(chan struct{})
	}
	return nil
}

// Run keeps the Secret until ctx ends, checking it every period: a
// replica that renewed it, or a Secret deleted or edited by hand, is
// followed.
func (k *Keeper) Run(ctx context.Context, period time.Duration) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := k.Ensure(ctx); err != nil {
				k.Log.Error(err, "keeping the progress TLS Secret; serving the certificate held")
			}
		}
	}
}

// GetCertificate serves the certificate held, for tls.Config.
func (k *Keeper) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.cert == nil {
		return nil, errors.New("no serving certificate yet")
	}
	return k.cert, nil
}

// CA is the CA's certificate, PEM-encoded, and a channel closed when it
// changes; nil before the Secret was first read.
func (k *Keeper) CA() ([]byte, <-chan struct{}) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.cert == nil {
		return nil, nil
	}
	return slices.Clone(k.current.CACert), k.changed
}

func dataOf(m Material) map[string][]byte {
	return map[string][]byte{
		CACertKey:               m.CACert,
		CAKeyKey:                m.CAKey,
		corev1.TLSCertKey:       m.Cert,
		corev1.TLSPrivateKeyKey: m.Key,
	}
}

func materialOf(s *corev1.Secret) Material {
	return Material{CACert: s.Data[CACertKey], CAKey: s.Data[CAKeyKey], Cert: s.Data[corev1.TLSCertKey], Key: s.Data[corev1.TLSPrivateKeyKey]}
}
