package progress

import (
	"crypto/tls"
	"net/http"
	"time"
)

// How long a connection may take over each part of a request: Kubeflow
// Trainer's status server's bounds, which its clients expect (they give
// up after 5 s).
const (
	ReadHeaderTimeout = 5 * time.Second
	ReadTimeout       = 10 * time.Second
	// RequestTimeout bounds a request's work once read: a review.
	RequestTimeout = 10 * time.Second
	WriteTimeout   = ReadTimeout + RequestTimeout
	IdleTimeout    = 120 * time.Second
	// MaxHeaderBytes holds a path, a few headers and a service account
	// token (one to two KiB).
	MaxHeaderBytes = 16 << 10
)

// NewHTTPServer is the progress server's http.Server on addr, serving h
// over TLS with the certificate getCertificate gives (Keeper's).
func NewHTTPServer(addr string, h http.Handler, getCertificate func(*tls.ClientHelloInfo) (*tls.Certificate, error)) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           h,
		ReadHeaderTimeout: ReadHeaderTimeout,
		ReadTimeout:       ReadTimeout,
		WriteTimeout:      WriteTimeout,
		IdleTimeout:       IdleTimeout,
		MaxHeaderBytes:    MaxHeaderBytes,
		TLSConfig:         &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: getCertificate},
	}
}
