package diserver

import (
	"fmt"
	"math"
	"net/http"

	"golang.org/x/time/rate"
)

// Policy is who may call the DI server and how often: the reconciler's
// --di-server-* flags.
type Policy struct {
	// WriteRate is how many requests a second may write to the API
	// server, across every job: POST and DELETE .../replicas and POST
	// .../profilings that change something. DefaultWriteRate when zero.
	WriteRate float64
	// WriteBurst is how many such writes may come at once above the rate.
	// DefaultWriteBurst when zero.
	WriteBurst int
	// TokenReview also serves callers that present a bearer token issued
	// for Audience, authenticated by a TokenReview and authorized by a
	// SubjectAccessReview (see reviewer). Off, only the job's own pods
	// may call about a job.
	TokenReview bool
}

// The default bound on writes. Each write is one PATCH to the API server
// (more only when it races another, see retryOnConflict). DI-engine
// workers write when they resize their job or post profilings: ten a
// second serves a few hundred jobs posting every half minute, and the
// burst a rescale storm of a few dozen jobs at once.
const (
	DefaultWriteRate  = 10
	DefaultWriteBurst = 50
)

// withDefaults fills the zero fields and checks the others.
func (p Policy) withDefaults() (Policy, error) {
	if p.WriteRate == 0 {
		p.WriteRate = DefaultWriteRate
	}
	if p.WriteBurst == 0 {
		p.WriteBurst = DefaultWriteBurst
	}
	switch {
	case p.WriteRate < 0 || math.IsNaN(p.WriteRate) || math.IsInf(p.WriteRate, 0):
		return p, fmt.Errorf("diserver: the write rate must be a positive number, not %v", p.WriteRate)
	case p.WriteBurst < 0:
		return p, fmt.Errorf("diserver: the write burst must be positive, not %d", p.WriteBurst)
	}
	return p, nil
}

// bucket is a token bucket that answers a request over its rate with 429
// and the seconds until a token is free.
type bucket struct {
	limiter *rate.Limiter
	// what the tokens pay for, for the message.
	what string
}

func newBucket(perSecond float64, burst int, what string) *bucket {
	return &bucket{limiter: rate.NewLimiter(rate.Limit(perSecond), burst), what: what}
}

// take takes a token now, or refuses the request.
func (b *bucket) take() *requestError {
	r := b.limiter.Reserve()
	if r.OK() {
		wait := r.Delay()
		if wait == 0 {
			return nil
		}
		// Refused, the token is not taken: only admitted requests count.
		r.Cancel()
		seconds := int(math.Ceil(wait.Seconds()))
		e := fail(http.StatusTooManyRequests, "too many %s: the DI server admits %g a second; retry in %d s",
			b.what, float64(b.limiter.Limit()), seconds)
		e.retryAfter = seconds
		return e
	}
	return fail(http.StatusTooManyRequests, "too many %s: the DI server admits none", b.what)
}
