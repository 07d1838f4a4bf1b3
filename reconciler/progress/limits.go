package progress

import (
	"fmt"
	"math"
	"net/http"
	"sync"
	"time"

	"golang.org/x/time/rate"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/trainfn/trainfn/reconciler/observed"
)

// The bounds on reports, on each replica. Kubeflow's clients report at
// most once every 5 s, from one rank: a job may report once a second, and
// ten times at once (several ranks reporting, a client that retries),
// before it is answered 429. New tokens cost a TokenReview each: ten a
// second, and fifty at once (a large job's pods starting together),
// across jobs; of those, one remote address may ask two a second, and
// twenty at once (the ranks of a node's pods on its host network, which
// share its address), so that one caller's made-up tokens leave the
// others' reviews be.
const (
	JobRate            = 1
	JobBurst           = 10
	ReviewRate         = 10
	ReviewBurst        = 50
	AddressReviewRate  = 2
	AddressReviewBurst = 20
	// maxKeyedBuckets bounds the buckets kept per kind of key; a full
	// bucket, of a job or address not heard from for a while, is
	// forgotten first.
	maxKeyedBuckets = 4096
)

// bucket is a token bucket that answers a request over its rate with 429
// and the seconds until a token is free.
type bucket struct {
	limiter *rate.Limiter
	what    string
}

func newBucket(perSecond float64, burst int, what string) *bucket {
	return &bucket{limiter: rate.NewLimiter(rate.Limit(perSecond), burst), what: what}
}

// take takes a token now, or refuses the request without taking one.
func (b *bucket) take() *refusal {
	return b.takeAt(time.Now())
}

func (b *bucket) takeAt(now time.Time) *refusal {
	r := b.limiter.ReserveN(now, 1)
	wait := r.DelayFrom(now)
	if r.OK() && wait == 0 {
		return nil
	}
	r.CancelAt(now)
	seconds := max(int(math.Ceil(wait.Seconds())), 1)
	e := refuse(http.StatusTooManyRequests, metav1.StatusReasonTooManyRequests,
		fmt.Sprintf("too many %s: %g a second are admitted; retry in %d s", b.what, float64(b.limiter.Limit()), seconds))
	e.retryAfter = seconds
	e.status.Details = &metav1.StatusDetails{RetryAfterSeconds: int32(seconds)}
	return e
}

// keyedBuckets are a bucket per key: per job, per remote address.
type keyedBuckets[K comparable] struct {
	perSecond float64
	burst     int
	now       func() time.Time
	// what names the requests a key's bucket counts, for its 429.
	what func(K) string

	mu      sync.Mutex
	buckets map[K]*bucket
}

func newKeyedBuckets[K comparable](perSecond float64, burst int, now func() time.Time, what func(K) string) *keyedBuckets[K] {
	return &keyedBuckets[K]{perSecond: perSecond, burst: burst, now: now, what: what, buckets: map[K]*bucket{}}
}

func newJobBuckets(perSecond float64, burst int, now func() time.Time) *keyedBuckets[observed.Key] {
	return newKeyedBuckets(perSecond, burst, now, func(key observed.Key) string {
		return "reports for " + key.Kind + " " + key.Namespace + "/" + key.Name
	})
}

func newAddressBuckets(perSecond float64, burst int, now func() time.Time) *keyedBuckets[string] {
	return newKeyedBuckets(perSecond, burst, now, func(address string) string {
		return "reviews of new bearer tokens from " + address
	})
}

// take takes a token of the key's bucket, or refuses the request.
func (j *keyedBuckets[K]) take(key K) *refusal {
	j.mu.Lock()
	now := j.now()
	b, ok := j.buckets[key]
	if !ok {
		if len(j.buckets) >= maxKeyedBuckets {
			j.forgetFull(now)
		}
		b = newBucket(j.perSecond, j.burst, j.what(key))
		j.buckets[key] = b
	}
	j.mu.Unlock()
	return b.takeAt(now)
}

// forgetFull forgets the buckets that are full, which a new bucket would
// be too; if none is, one at random: under a flood of keys the map stays
// its size.
func (j *keyedBuckets[K]) forgetFull(now time.Time) {
	for k, b := range j.buckets {
		if b.limiter.TokensAt(now) >= float64(j.burst) {
			delete(j.buckets, k)
		}
	}
	for k := range j.buckets {
		if len(j.buckets) < maxKeyedBuckets {
			break
		}
		delete(j.buckets, k)
	}
}
