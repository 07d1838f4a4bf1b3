package progress

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// maxTokenLength bounds the bearer tokens decoded: a service account
// token is a kilobyte or two.
const maxTokenLength = 16 << 10

// claims are the claims of a pod-bound service account token the
// pre-filter reads, as the API server issues them.
type claims struct {
	Audience   audience `json:"aud"`
	Expiry     int64    `json:"exp"`
	Kubernetes struct {
		Namespace string `json:"namespace"`
		Pod       struct {
			Name string `json:"name"`
		} `json:"pod"`
	} `json:"kubernetes.io"`
}

// audience is a JWT's aud: one string or a list of them (RFC 7519 4.1.3).
type audience []string

func (a *audience) UnmarshalJSON(b []byte) error {
	var one string
	if json.Unmarshal(b, &one) == nil {
		*a = audience{one}
		return nil
	}
	return json.Unmarshal(b, (*[]string)(a))
}

// prefilter refuses, without asking the API server, a token that cannot
// be a pod-bound token of namespace for our audience, still valid at now.
// Its claims are read without checking the signature: they are trusted
// for nothing but this, a TokenReview decides. What it spares is the
// review a made-up token would cost, so that random tokens do not drain
// the reviews every job's pods need.
func prefilter(token, namespace string, now time.Time) *refusal {
	if why := unlikely(token, namespace, now); why != "" {
		return forbidden("bearer token: " + why)
	}
	return nil
}

// unlikely says why token cannot be one the server takes; "" when it may.
func unlikely(token, namespace string, now time.Time) string {
	if len(token) > maxTokenLength {
		return fmt.Sprintf("longer than %d bytes", maxTokenLength)
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return "not a JSON Web Token of three parts"
	}
	var payload []byte
	for i, p := range parts {
		b, err := base64.RawURLEncoding.DecodeString(p)
		if err != nil || len(b) == 0 {
			return "not a JSON Web Token: a part is not base64url"
		}
		if i == 1 {
			payload = b
		}
	}
	var c claims
	if err := json.Unmarshal(payload, &c); err != nil {
		return "not a JSON Web Token: its payload is not a JSON object of claims"
	}
	switch {
	case !slices.Contains(c.Audience, Audience):
		return "not issued for audience " + Audience
	case c.Expiry <= now.Unix():
		return "expired, or with no expiry"
	case c.Kubernetes.Pod.Name == "":
		return "not bound to a pod"
	case c.Kubernetes.Namespace != namespace:
		return fmt.Sprintf("of a pod of namespace %q, not %s", c.Kubernetes.Namespace, namespace)
	}
	return ""
}
