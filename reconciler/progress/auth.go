package progress

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainfn/trainfn/reconciler/internal/expiring"
	"github.com/trainfn/trainfn/reconciler/observed"
	"github.com/trainfn/trainfn/render/handoff"
)

// Audience is the audience of the projected service account token a
// progress job's pods present: a token for the API server, or for another
// service, is refused, and this one is good for nothing else.
const Audience = handoff.ProgressAudience

// The user extra keys of a pod-bound service account token, as the API
// server's TokenReview returns them.
const (
	podNameExtra = "authentication.kubernetes.io/pod-name"
	podUIDExtra  = "authentication.kubernetes.io/pod-uid"
)

// ReviewCacheTTL is how long a TokenReview's answer is reused. A client
// reporting every 5 s (Kubeflow's SDK and the transformers callback do)
// costs the API server one review a minute. A token is good only while
// its pod lives, which every request checks in the cache anyway: what the
// cache delays is only the end of a token revoked by other means.
const ReviewCacheTTL = time.Minute

// maxCachedReviews bounds the cache: tokens are the caller's choice.
const maxCachedReviews = 4096

// reviewedPod is the pod a token was bound to; zero for a token refused.
type reviewedPod struct {
	namespace, name string
	uid             types.UID
}

// reviewer authenticates pod-bound tokens by TokenReviews. A token that
// cannot be one (prefilter) is refused without one; reviews not in its
// cache take a token of the caller's address's bucket, then of the one
// bucket of all, so that a flood of made-up tokens costs the API server a
// bounded number of reviews, and one caller's flood leaves the others
// theirs.
type reviewer struct {
	client    client.Client
	cache     client.Reader
	bucket    *bucket
	addresses *keyedBuckets[string]
	reviews   *expiring.Cache[[sha256.Size]byte, reviewedPod]
	now       func() time.Time
}

// authenticate is the pod of job key that sent r, or a refusal: the
// bearer token must be bound to a pod of the path's namespace that
// carries the job's labels, and is that pod (the same UID) still.
func (v *reviewer) authenticate(ctx context.Context, r *http.Request, key observed.Key) (*corev1.Pod, *refusal) {
	token, bad := bearerToken(r)
	if bad != nil {
		return nil, bad
	}
	if bad := prefilter(token, key.Namespace, v.now()); bad != nil {
		return nil, bad
	}
	bound, err := v.review(ctx, token, remoteHost(r))
	if err != nil {
		return nil, err
	}
	if bound.name == "" {
		return nil, forbidden("bearer token: not valid, expired, not bound to a pod, or not issued for audience " + Audience)
	}
	if bound.namespace != key.Namespace {
		return nil, forbidden(fmt.Sprintf("bearer token: of a pod of namespace %s, not %s", bound.namespace, key.Namespace))
	}
	var pod corev1.Pod
	switch err := v.cache.Get(ctx, types.NamespacedName{Namespace: key.Namespace, Name: bound.name}, &pod); {
	case apierrors.IsNotFound(err):
		// The cache holds trainfn's pods only.
		return nil, forbidden(fmt.Sprintf("pod %s/%s: not a pod of a job trainfn rendered", key.Namespace, bound.name))
	case err != nil:
		return nil, refuse(http.StatusServiceUnavailable, metav1.StatusReasonServiceUnavailable, "reading the caller's pod: "+err.Error())
	}
	if pod.UID != bound.uid {
		return nil, forbidden(fmt.Sprintf("pod %s/%s: the token was bound to another pod of that name", key.Namespace, bound.name))
	}
	l := pod.Labels
	if l[handoff.JobNameLabel] != key.Name || l[handoff.OperatorNameLabel] != handoff.Operator || l[handoff.KindLabel] != key.Kind {
		return nil, forbidden(fmt.Sprintf("pod %s/%s: not a pod of %s %s", key.Namespace, bound.name, key.Kind, key.Name))
	}
	return &pod, nil
}

// review is the pod token is bound to, from the cache or a TokenReview
// asked for by a caller at address.
func (v *reviewer) review(ctx context.Context, token, address string) (reviewedPod, *refusal) {
	key := sha256.Sum256([]byte(token))
	if bound, ok := v.reviews.Get(key); ok {
		return bound, nil
	}
	if over := v.addresses.take(address); over != nil {
		return reviewedPod{}, over
	}
	if over := v.bucket.take(); over != nil {
		return reviewedPod{}, over
	}
	review := &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token, Audiences: []string{Audience}}}
	if err := v.client.Create(ctx, review); err != nil {
		return reviewedPod{}, refuse(http.StatusServiceUnavailable, metav1.StatusReasonServiceUnavailable, "reviewing the bearer token: "+err.Error())
	}
	bound := boundPod(review.Status)
	v.reviews.Put(key, bound)
	return bound, nil
}

// boundPod is the pod a review says the token is bound to. A review that
// names no audience vouches for the API server's own, not ours.
func boundPod(s authenticationv1.TokenReviewStatus) reviewedPod {
	if !s.Authenticated || !slices.Contains(s.Audiences, Audience) {
		return reviewedPod{}
	}
	names, uids := s.User.Extra[podNameExtra], s.User.Extra[podUIDExtra]
	// system:serviceaccount:<namespace>:<name>
	parts := strings.Split(s.User.Username, ":")
	if len(names) != 1 || len(uids) != 1 || len(parts) != 4 || parts[0] != "system" || parts[1] != "serviceaccount" {
		return reviewedPod{}
	}
	return reviewedPod{namespace: parts[2], name: names[0], uid: types.UID(uids[0])}
}

// bearerToken is the token of the request's one Authorization header.
func bearerToken(r *http.Request) (string, *refusal) {
	values := r.Header.Values("Authorization")
	if len(values) != 1 {
		return "", forbidden(`Authorization: want one "Bearer <token>", with a token for audience ` + Audience)
	}
	scheme, token, _ := strings.Cut(values[0], " ")
	token = strings.TrimSpace(token)
	if !strings.EqualFold(scheme, "Bearer") || token == "" || strings.ContainsAny(token, " \t") {
		return "", forbidden(`Authorization: want "Bearer <token>"`)
	}
	return token, nil
}

// remoteHost is the caller's address without its port: a client opens
// connections from many ports.
func remoteHost(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}

func forbidden(message string) *refusal {
	return refuse(http.StatusForbidden, metav1.StatusReasonForbidden, message)
}
