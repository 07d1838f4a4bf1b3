package diserver

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainfn/trainfn/reconciler/internal/expiring"
)

// Audience is the audience a bearer token must be issued for: a token for
// the API server, which a pod's service account token is by default, is
// refused, so that a token given to one service cannot be replayed to
// another. A projected service account token with this audience, or
// `kubectl create token <account> --audience trainfn-di-server`, has it.
const Audience = "trainfn-di-server"

// ReviewCacheTTL is how long the answer of a TokenReview or of a
// SubjectAccessReview is reused: a caller polling the API costs the API
// server one review per this time, and a revoked token or right stops
// working at most this much later.
const ReviewCacheTTL = 10 * time.Second

// maxCachedReviews bounds each cache of reviews: tokens are the caller's
// choice, and each new one is a new entry.
const maxCachedReviews = 4096

// reviewer authenticates bearer tokens and authorizes their users by
// asking the API server, as the API server's own delegated authentication
// and authorization do for extension servers: a TokenReview for who holds
// the token, a SubjectAccessReview for whether that user may do what a
// request does. Reviews not in the cache take a token of their own bucket,
// so that a flood of made-up tokens costs the API server a bounded number
// of reviews and does not spend the workers' writes.
type reviewer struct {
	client client.Client
	bucket *bucket
	users  *expiring.Cache[[sha256.Size]byte, *authenticationv1.UserInfo]
	rights *expiring.Cache[[sha256.Size]byte, bool]
}

func newReviewer(c client.Client, p Policy, now func() time.Time) *reviewer {
	return &reviewer{
		client: c,
		bucket: newBucket(p.WriteRate, p.WriteBurst, "reviews of new bearer tokens and rights"),
		users:  expiring.New[[sha256.Size]byte, *authenticationv1.UserInfo](ReviewCacheTTL, maxCachedReviews, now),
		rights: expiring.New[[sha256.Size]byte, bool](ReviewCacheTTL, maxCachedReviews, now),
	}
}

// bearerToken is the token of the request's Authorization header, if it
// has one.
func bearerToken(r *http.Request) (string, bool, *requestError) {
	values := r.Header.Values("Authorization")
	switch {
	case len(values) == 0:
		return "", false, nil
	case len(values) > 1:
		return "", true, fail(http.StatusUnauthorized, "Authorization: given %d times; give one bearer token", len(values))
	}
	scheme, token, _ := strings.Cut(values[0], " ")
	token = strings.TrimSpace(token)
	if !strings.EqualFold(scheme, "Bearer") || token == "" || strings.ContainsAny(token, " \t") {
		return "", true, fail(http.StatusUnauthorized, "Authorization: want \"Bearer <token>\"")
	}
	return token, true, nil
}

// authenticate is the user holding token, if the token is valid for
// Audience.
func (v *reviewer) authenticate(ctx context.Context, token string) (*authenticationv1.UserInfo, error) {
	key := sha256.Sum256([]byte(token))
	user, cached := v.users.Get(key)
	if !cached {
		if over := v.bucket.take(); over != nil {
			return nil, over
		}
		review := &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token, Audiences: []string{Audience}}}
		if err := v.client.Create(ctx, review); err != nil {
			return nil, fromAPIServer(err, "reviewing the bearer token")
		}
		// A review that names no audience vouches for the API server's
		// own, not this one's: only a token that names Audience is good.
		if review.Status.Authenticated && slices.Contains(review.Status.Audiences, Audience) {
			user = &review.Status.User
		} else {
			logr.FromContextOrDiscard(ctx).V(1).Info("bearer token refused", "review", review.Status.Error)
		}
		v.users.Put(key, user)
	}
	if user == nil {
		return nil, fail(http.StatusUnauthorized, "bearer token: not valid, expired, or not issued for audience %s", Audience)
	}
	return user, nil
}

// authorize asks whether user may do what attrs say.
func (v *reviewer) authorize(ctx context.Context, user *authenticationv1.UserInfo, attrs authorizationv1.ResourceAttributes) error {
	spec := authorizationv1.SubjectAccessReviewSpec{
		ResourceAttributes: &attrs,
		User:               user.Username, UID: user.UID, Groups: user.Groups,
		Extra: make(map[string]authorizationv1.ExtraValue, len(user.Extra)),
	}
	for k, v := range user.Extra {
		spec.Extra[k] = authorizationv1.ExtraValue(v)
	}
	// The spec holds nothing secret; its digest is the key. Maps encode
	// with sorted keys, so the same question has the same key.
	raw, err := json.Marshal(spec)
	if err != nil {
		return err
	}
	key := sha256.Sum256(raw)
	allowed, cached := v.rights.Get(key)
	if !cached {
		if over := v.bucket.take(); over != nil {
			return over
		}
		review := &authorizationv1.SubjectAccessReview{Spec: spec}
		if err := v.client.Create(ctx, review); err != nil {
			return fromAPIServer(err, "reviewing the caller's rights")
		}
		allowed = review.Status.Allowed && !review.Status.Denied
		v.rights.Put(key, allowed)
	}
	if !allowed {
		return fail(http.StatusForbidden, "user %q may not %s", user.Username, describe(attrs))
	}
	return nil
}

// describe says what attrs ask for, as kubectl auth can-i would.
func describe(a authorizationv1.ResourceAttributes) string {
	resource := a.Resource
	if a.Group != "" {
		resource += "." + a.Group
	}
	if a.Name != "" {
		resource += "/" + a.Name
	}
	return a.Verb + " " + resource + " in namespace " + a.Namespace
}
