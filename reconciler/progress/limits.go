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

// The bounds on reports. Kubeflow's clients report at most once every
// 5 s, from one rank: a job may report once a second, and ten times at
// once (several ranks reporting, a client that retries), before it is
// answered 429. New tokens cost a TokenReview each: ten a second, and
// fifty at once (a large job's pods starting together), across jobs.
const (
	JobRate     = 1
	JobBurst    = 10
	ReviewRate  = 10
	ReviewBurst = 50
	// maxJobBuckets bounds the buckets kept; a full bucket, of a job
	// that has not reported for a while, is forgotten first.
	maxJobBuckets = 4096
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

// jobBuckets are a bucket per job.
type jobBuckets struct {
	perSecond float64
	burst     int
	now       func() time.Time

	mu      sync.Mutex
	buckets map[observed.Key]*bucket
}

func newJobBuckets(perSecond float64, burst int, now func() time.Time) *jobBuckets {
	return &jobBuckets{perSecond: perSecond, burst: burst, now: now, buckets: map[observed.Key]*bucket{}}
}

// take takes a token of the job's bucket, or refuses the request.
func (j *jobBuckets) take(key observed.Key) *refusal {
	j.mu.Lock()
	now := j.now()
	b, ok := j.buckets[key]
	if !ok {
		if len(j.buckets) >= maxJobBuckets {
			j.forgetFull(now)
		}
		b = newBucket(j.perSecond, j.burst, "reports for "+key.Kind+" "+key.Namespace+"/"+key.Name)
		j.buckets[key] = b
	}
	j.mu.Unlock()
	return b.takeAt(now)
}

// forgetFull forgets the buckets that are full, which a new bucket would
// be too; if none is, one at random: under a flood of jobs the map stays
// its size.
func (j *jobBuckets) forgetFull(now time.Time) {
	for k, b := range j.buckets {
		if b.limiter.TokensAt(now) >= float64(j.burst) {
			delete(j.buckets, k)
		}
	}
	for k := range j.buckets {
		if len(j.buckets) < maxJobBuckets {
			break
		}
		delete(j.buckets, k)
	}
}
