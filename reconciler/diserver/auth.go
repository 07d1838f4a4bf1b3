package diserver

import (
	"context"
	"net/http"

	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// authenticate tells who sent a request about job id, or refuses it: a
// bearer token when the server reviews them (Policy.TokenReview), else the
// address of one of the job's own pods. It reads the headers and the
// cache only, and comes before anything about the job is answered, so a
// stranger learns nothing of the job, not even whether it exists.
//
// A token caller must also hold the right to read the job: list pods in
// its namespace, which is what GET .../replicas answers with. A write
// then asks for the right to patch the workload it writes (mayWrite).
func (s *server) authenticate(ctx context.Context, r *http.Request, id JobID) (caller, error) {
	token, hasToken, bad := bearerToken(r)
	if s.reviewer != nil && hasToken {
		if bad != nil {
			return caller{}, bad
		}
		user, err := s.reviewer.authenticate(ctx, token)
		if err != nil {
			return caller{}, err
		}
		read := authorizationv1.ResourceAttributes{Namespace: id.Namespace, Verb: "list", Resource: "pods"}
		if err := s.reviewer.authorize(ctx, user, read); err != nil {
			return caller{}, err
		}
		return caller{user: user}, nil
	}
	pod, err := s.podAt(ctx, id, r.RemoteAddr)
	if err != nil {
		return caller{}, err
	}
	if pod != nil {
		return caller{pod: pod}, nil
	}
	if s.reviewer != nil {
		return caller{}, fail(http.StatusUnauthorized,
			"job %s: the request is from none of the job's pods and has no bearer token: call from one of its pods, or present a token for audience %s",
			id.job(), Audience)
	}
	message := "job %s: the request is from none of the job's pods, which alone may call about it"
	if hasToken {
		message += "; bearer tokens are not reviewed by this server (--di-server-token-review is off)"
	}
	return caller{}, fail(http.StatusForbidden, message, id.job())
}

// mayWrite tells whether the caller may write obj, a workload of the job
// it called about: a pod of the job may (authenticate found it among the
// job's); a token's user must hold the right to patch obj.
func (s *server) mayWrite(ctx context.Context, c caller, obj client.Object) error {
	if c.user == nil {
		return nil
	}
	attrs := authorizationv1.ResourceAttributes{Namespace: obj.GetNamespace(), Verb: "patch", Name: obj.GetName(),
		Group: "batch", Resource: "jobs"}
	if _, ok := obj.(*appsv1.StatefulSet); ok {
		attrs.Group, attrs.Resource = "apps", "statefulsets"
	}
	return s.reviewer.authorize(ctx, c.user, attrs)
}
